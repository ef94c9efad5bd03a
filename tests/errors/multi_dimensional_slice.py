# expect: 8:13: multi-dimensional slice: only 1-D arrays can be sliced
"""Slices a block out of a 2-D array."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[::1])")
def corner_sum(m, out):
    block = m[0:2, 0:2]
    out[0] = block[0, 0] + block[1, 1]
