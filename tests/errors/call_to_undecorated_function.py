# expect: 15:18: call to gelu(): 'gelu' is a plain Python function of this module (no @cuda.jit(device=True) or @njit): Numba cannot call it from a kernel either ("Untyped global name")
"""Calls a plain Python helper that was never decorated."""
from numba import cuda
import math


def gelu(v):
    return 0.5 * v * (1.0 + math.tanh(0.79788456 * (v + 0.044715 * v ** 3)))


@cuda.jit("void(float32[::1], float32[::1])")
def activate(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = gelu(x[i])
