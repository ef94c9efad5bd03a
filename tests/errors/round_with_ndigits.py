# expect: 10:18: round() with ndigits: only round(x) is supported
"""Rounds to two decimals."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def cents(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = round(x[i], 2)
