# expect: 8:13: multi-dimensional slice: only slices that are one contiguous piece of the array are supported
"""Slices a block out of a 2-D array."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[::1])")
def corner_sum(m, out):
    block = m[0:2, 0:2]
    out[0] = block[0, 0] + block[1, 1]
