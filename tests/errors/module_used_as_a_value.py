# expect: 10:9: module 'math' used as a value: only its functions can be called
"""Passes the math module to a device function."""
from numba import cuda
import math


@cuda.jit("void(float32[::1], float32[::1])")
def roots(x, out):
    i = cuda.grid(1)
    m = math
    if i < x.shape[0]:
        out[i] = x[i]
