"""Tiled matrix multiplication with *static* shared memory.

The same algorithm as ``matmul.py`` (the lecture's kernel), but the tile width is the
module constant ``TILE``.  Because the size is known when Numba compiles the kernel, the
two tiles can be ordinary 2-D shared arrays and the inner loop has a constant trip count,
which is what makes this version several times faster than the runtime-``tw`` one.

Launch:  ``matmul_tile[blocks, (TILE, TILE)](m, n, out)``
"""
import math

import numpy as np
from numba import cuda, float32

TILE = 16


@cuda.jit("void(float32[:, ::1], float32[:, ::1], float32[:, ::1])")
def matmul_tile(m, n, out):
    tc, tr = cuda.threadIdx.x, cuda.threadIdx.y
    c, r = cuda.grid(2)            # x is the column, y the row
    h, k = m.shape
    w = n.shape[1]
    # one TILE x TILE tile of m and one of n, shared by the whole block
    ms = cuda.shared.array((TILE, TILE), float32)
    ns = cuda.shared.array((TILE, TILE), float32)
    p = float32(0.0)
    for ph in range(math.ceil(k / TILE)):
        idx = ph * TILE
        # load one element of each tile; zeros outside the matrices
        ms[tr, tc] = m[r, tc + idx] if r < h and idx + tc < k else float32(0.0)
        ns[tr, tc] = n[tr + idx, c] if c < w and idx + tr < k else float32(0.0)
        cuda.syncthreads()
        for i in range(TILE):
            p += ms[tr, i] * ns[i, tc]
        cuda.syncthreads()
    if r < h and c < w:
        out[r, c] = p


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

    size: "small" (19x17 @ 17x20), "bench" (5120 x 256 @ 256 x 5120) or an int n (n x n @ n x n).
    """
    if isinstance(size, str):
        h, k, w = {"small": (19, 17, 20), "bench": (5120, 256, 5120)}[size]
    else:
        h = k = w = int(size)
    m = rng.standard_normal((h, k)).astype(np.float32)
    n = rng.standard_normal((k, w)).astype(np.float32)
    out = np.zeros((h, w), dtype=np.float32)
    blocks = (math.ceil(w / TILE), math.ceil(h / TILE))
    return dict(kernel=matmul_tile, griddim=blocks, blockdim=(TILE, TILE), shared=0,
                args=[m, n, out], expected={2: reference(m, n)}, rtol=1e-4, atol=1e-4,
                flops=2 * h * k * w, bytes=m.nbytes + n.nbytes + out.nbytes)
