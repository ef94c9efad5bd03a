"""Tiled matrix transpose through a padded shared-memory tile.

A block reads a TILE x TILE tile of ``a`` with coalesced row accesses, then writes the
transposed tile to ``out``, again along rows.  Reading the tile back column-wise
(``tile[tx, ty]``) would hit the same shared-memory bank 16 or 32 times over; one extra
column of padding, ``(TILE, TILE + 1)``, spreads those reads across all the banks.
The padded width is its own module constant: Numba needs a shared array's shape to be
made of constants, and ``TILE + 1`` written inside the call is typed as a plain int64
("No implementation of function ... shared.array ... array(Tuple(Literal[int](16), int64),
class(float32))"), although Numba's CUDA simulator accepts it.

Launch:  ``transpose[(ceil(w/TILE), ceil(h/TILE)), (TILE, TILE)](a, out)``
"""
import math

import numpy as np
from numba import cuda, float32

TILE = 16
TILE_PAD = TILE + 1               # one spare column per row against bank conflicts


@cuda.jit("void(float32[:, ::1], float32[:, ::1])")
def transpose(a, out):
    tile = cuda.shared.array((TILE, TILE_PAD), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    bx, by = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
    h, w = a.shape
    # read: a[y, x] for this block's tile of a
    x, y = bx + tx, by + ty
    if y < h and x < w:
        tile[ty, tx] = a[y, x]
    cuda.syncthreads()
    # write: the same tile lands at (bx, by) swapped in out, which is w x h
    x, y = by + tx, bx + ty
    if y < w and x < h:
        out[y, x] = tile[tx, ty]


def reference(a):
    """NumPy reference."""
    return np.ascontiguousarray(a.T)


# The sizes `numba2cuda verify` sweeps: n x (n+2) matrices (tile-1, tile+1, primes, 1).
VERIFY_SIZES = ("small", 1, TILE - 1, TILE + 1, 67, 97)


# The sizes `numba2cuda bench` times: "bench", where device time dominates, and a size a program
# launches many times, where the host cost of a launch is as large as the kernel.
BENCH_SIZES = ("bench", 2048)


def example(rng, size="small"):
    """One run: inputs, launch configuration and the expected outputs.

    size: "small" (37 x 29), "bench" (8192 x 8192) or an int n (n x (n+2), so it is not square).
    """
    h, w = {"small": (37, 29), "bench": (8192, 8192)}[size] if isinstance(size, str) else (int(size), int(size) + 2)
    a = rng.standard_normal((h, w)).astype(np.float32)
    out = np.zeros((w, h), dtype=np.float32)
    grid = (math.ceil(w / TILE), math.ceil(h / TILE))
    return dict(kernel=transpose, griddim=grid, blockdim=(TILE, TILE), shared=0,
                args=[a, out], expected={1: reference(a)}, rtol=0, atol=0,
                bytes=a.nbytes + out.nbytes)
