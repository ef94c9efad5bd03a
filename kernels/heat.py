"""One explicit step of the 2-D heat equation, written with device functions.

``u_new = u + alpha * (d2u/dx2 + d2u/dy2)`` on the interior; the boundary is held fixed.
Each step reads only the old grid and writes only the new one (a Jacobi-style update), so
no thread needs another thread's result and no synchronisation is needed.

Two ``@cuda.jit(device=True)`` helpers are called from the kernel: one returns a tuple
(the second differences along x and y, unpacked by the caller), one returns a value.
``alpha`` must be below 0.25 for the explicit scheme to be stable.

Launch:  ``heat_step[(ceil(w/16), ceil(h/16)), (16, 16)](u, u_new, alpha)``
"""
import math

import numpy as np
from numba import cuda, float32


@cuda.jit(device=True)
def second_differences(u, y, x):
    """Central second differences along x and along y at (y, x)."""
    c = u[y, x]
    d2x = u[y, x - 1] - float32(2.0) * c + u[y, x + 1]
    d2y = u[y - 1, x] - float32(2.0) * c + u[y + 1, x]
    return d2x, d2y


@cuda.jit(device=True)
def euler_update(c, d2x, d2y, alpha):
    """Explicit Euler step of du/dt = alpha * laplacian(u)."""
    return c + alpha * (d2x + d2y)


@cuda.jit("void(float32[:, ::1], float32[:, ::1], float32)")
def heat_step(u, u_new, alpha):
    x, y = cuda.grid(2)
    h, w = u.shape
    if 0 < y < h - 1 and 0 < x < w - 1:
        d2x, d2y = second_differences(u, y, x)
        u_new[y, x] = euler_update(u[y, x], d2x, d2y, alpha)
    elif y < h and x < w:
        u_new[y, x] = u[y, x]      # fixed (Dirichlet) boundary


def reference(u, alpha):
    """NumPy reference."""
    u = u.astype(np.float64)
    new = u.copy()
    lap = (u[1:-1, :-2] + u[1:-1, 2:] + u[:-2, 1:-1] + u[2:, 1:-1] - 4 * u[1:-1, 1:-1])
    new[1:-1, 1:-1] = u[1:-1, 1:-1] + alpha * lap
    return new.astype(np.float32)


# The sizes `numba2cuda verify` sweeps (block-1, block+1, a prime, 1).
VERIFY_SIZES = ("small", 1, 15, 17, 67)


# The sizes `numba2cuda bench` times: "bench", where device time dominates, and a size a program
# launches many times, where the host cost of a launch is as large as the kernel.
BENCH_SIZES = ("bench", 1024)


def example(rng, size="small"):
    """One run: inputs, launch configuration and the expected outputs.

    size: "small" (18 x 21), "bench" (4096 x 4096) or an int n (n x (n+2)).
    """
    h, w = {"small": (18, 21), "bench": (4096, 4096)}[size] if isinstance(size, str) else (int(size), int(size) + 2)
    alpha = 0.2
    u = rng.random((h, w), dtype=np.float32)
    u_new = np.zeros_like(u)
    block = (16, 16)
    grid = (math.ceil(w / block[0]), math.ceil(h / block[1]))
    return dict(kernel=heat_step, griddim=grid, blockdim=block, shared=0,
                args=[u, u_new, alpha], expected={1: reference(u, np.float32(alpha))},
                rtol=1e-5, atol=1e-6, bytes=u.nbytes + u_new.nbytes)
