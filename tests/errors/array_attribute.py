# expect: 9:18: array attribute .strides: only .shape, .size, .ndim, .dtype, .T and .flat are supported
"""Reads the row stride of a 2-D array."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], int64[::1])")
def stride(m, out):
    if cuda.grid(1) == 0:
        out[0] = m.strides[0]
