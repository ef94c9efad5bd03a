# expect: 8:19: cuda.grid() dimension: must be the constant 1, 2 or 3
"""Passes the grid dimensionality as an argument."""
from numba import cuda


@cuda.jit("void(float32[::1], int32)")
def fill(out, nd):
    i = cuda.grid(nd)
    if i < out.shape[0]:
        out[i] = 1.0
