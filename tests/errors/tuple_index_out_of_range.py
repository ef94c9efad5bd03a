# expect: 8:14: tuple index: tuples are indexed with an in-range integer constant
"""Reads the third dimension of a 2-D array's shape."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], int64[::1])")
def depth(m, out):
    out[0] = m.shape[2]
