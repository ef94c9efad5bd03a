# expect: 8:14: tuple index: 2 is out of range for a tuple of 2
"""Reads the third dimension of a 2-D array's shape."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], int64[::1])")
def depth(m, out):
    out[0] = m.shape[2]
