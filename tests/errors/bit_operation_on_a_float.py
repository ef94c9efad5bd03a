# expect: 10:18: '&' on a float: bit operations need integers
"""Masks a float value with a bitwise and."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def low_bits(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] & 0xFF
