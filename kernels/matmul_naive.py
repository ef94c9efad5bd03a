"""Naive matrix multiplication: one thread per output element.

Every thread reads a whole row of ``m`` and a whole column of ``n`` straight from global
memory.  Simple and correct; the tiled versions (``matmul_tile.py``, ``matmul.py``) reuse
each loaded value TILE times instead.

Launch:  ``matmul_naive[blocks, (16, 16)](m, n, out)``
"""
import math

import numpy as np
from numba import cuda, float32


@cuda.jit("void(float32[:, ::1], float32[:, ::1], float32[:, ::1])")
def matmul_naive(m, n, out):
    c, r = cuda.grid(2)            # global (x, y) = (column, row) of this thread
    h, k = m.shape
    w = n.shape[1]
    if r < h and c < w:            # the grid is rounded up, so guard the edges
        acc = float32(0.0)
        for i in range(k):
            acc += m[r, i] * n[i, c]
        out[r, c] = acc


def reference(m, n):
    """NumPy reference."""
    return (m.astype(np.float64) @ n.astype(np.float64)).astype(np.float32)


# The sizes `numba2cuda verify` sweeps (tile-1, tile+1, a prime, 1).
VERIFY_SIZES = ("small", 1, 15, 17, 67)


# The sizes `numba2cuda bench` times: "bench", where device time dominates, and a size a program
# launches many times, where the host cost of a launch is as large as the kernel.
BENCH_SIZES = ("bench", 512)


def example(rng, size="small"):
    """One run: inputs, launch configuration and the expected outputs.

    size: "small" (21x13 @ 13x18), "bench" (5120 x 256 @ 256 x 5120) or an int n (n x n @ n x n).
    """
    if isinstance(size, str):
        h, k, w = {"small": (21, 13, 18), "bench": (5120, 256, 5120)}[size]
    else:
        h = k = w = int(size)
    m = rng.standard_normal((h, k)).astype(np.float32)
    n = rng.standard_normal((k, w)).astype(np.float32)
    out = np.zeros((h, w), dtype=np.float32)
    block = (16, 16)
    grid = (math.ceil(w / block[0]), math.ceil(h / block[1]))
    return dict(kernel=matmul_naive, griddim=grid, blockdim=block, shared=0,
                args=[m, n, out], expected={2: reference(m, n)}, rtol=1e-4, atol=1e-4,
                flops=2 * h * k * w, bytes=m.nbytes + n.nbytes + out.nbytes)
