"""Laplace's equation on a plate, solved by Jacobi sweeps in one launch: the grid synchronises between sweeps.

Each sweep replaces every interior point by the mean of its four neighbours and copies the edge, which
holds the boundary condition. A sweep reads only what the previous sweep wrote, so every thread of the
grid must finish sweep k before any thread starts sweep k + 1: ``cuda.cg.this_grid().sync()`` is that
barrier, across blocks. Numba launches a kernel that calls it cooperatively (all blocks resident at
once), so the grid is small and each thread walks the plate with grid-stride loops.

The two buffers swap roles every sweep (``src``/``dst`` are bound on two branches); after an odd number
of sweeps the answer is in ``b``, after an even number in ``a``.

Launch:  ``laplace_sweeps[(gx, gy), (16, 8)](a, b, sweeps)`` with gx * gy blocks resident at once.
"""
import numpy as np
from numba import cuda, float32


@cuda.jit("void(float32[:, ::1], float32[:, ::1], int32)")
def laplace_sweeps(a, b, sweeps):
    grid = cuda.cg.this_grid()
    x0, y0 = cuda.grid(2)
    step_x, step_y = cuda.gridsize(2)
    h, w = a.shape
    for sweep in range(sweeps):
        if sweep % 2 == 0:
            src = a
            dst = b
        else:
            src = b
            dst = a
        for y in range(y0, h, step_y):
            for x in range(x0, w, step_x):
                if 0 < y < h - 1 and 0 < x < w - 1:
                    dst[y, x] = float32(0.25) * (src[y - 1, x] + src[y + 1, x] + src[y, x - 1] + src[y, x + 1])
                else:
                    dst[y, x] = src[y, x]
        grid.sync()


def reference(a, sweeps):
    """NumPy, in the kernel's float32 order of operations: (a, b) after the sweeps."""
    bufs = [a.copy(), np.zeros_like(a)]
    quarter = np.float32(0.25)
    for sweep in range(sweeps):
        src, dst = bufs[sweep % 2], bufs[1 - sweep % 2]
        dst[...] = src
        dst[1:-1, 1:-1] = quarter * (src[:-2, 1:-1] + src[2:, 1:-1] + src[1:-1, :-2] + src[1:-1, 2:])
    return bufs


def plate(rng, h, w):
    """A hot top edge, a cold bottom edge, sides that warm linearly, a random interior to relax."""
    a = rng.random((h, w), dtype=np.float32)
    a[0, :] = 100.0
    a[-1, :] = 0.0
    a[:, 0] = a[:, -1] = np.linspace(100.0, 0.0, h, dtype=np.float32)
    return a


# The sizes `numba2cuda verify` sweeps: several blocks each way, edges that are not multiples of the block.
VERIFY_SIZES = ("small", 1, 17, 67)

# "bench": a 2048 x 2048 plate, 100 sweeps on 256 resident blocks; "medium": many short launches' worth.
BENCH_SIZES = ("bench", "medium")


def example(rng, size="small"):
    """One run: inputs, launch configuration and the expected outputs.

    size: "small" (37 x 45, 9 sweeps, 12 blocks), "medium" (512 x 512, 20 sweeps), "bench" (2048 x 2048,
    100 sweeps) or an int n (n x (n + 3), 7 sweeps).
    """
    h, w, sweeps, grid = {"small": (37, 45, 9, (3, 4)), "medium": (512, 512, 20, (8, 8)),
                          "bench": (2048, 2048, 100, (16, 16))}[size] if isinstance(size, str) \
        else (int(size), int(size) + 3, 7, (2, 3))
    a = plate(rng, h, w)
    b = np.zeros_like(a)
    ea, eb = reference(a, sweeps)
    return dict(kernel=laplace_sweeps, griddim=grid, blockdim=(16, 8), shared=0, args=[a, b, sweeps],
                expected={0: ea, 1: eb}, inout={0}, bytes=2 * a.nbytes * sweeps)
