# expect: 9:18: tuple used as a value: tuples can only be unpacked or indexed with a constant
"""Stores the shape of an array as if it were a number."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], int64[::1])")
def shape_of(m, out):
    if cuda.grid(1) == 0:
        out[0] = m.shape
