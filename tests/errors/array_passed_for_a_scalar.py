# expect: 15:25: 'square': float32
"""Passes a whole array where the device function's signature wants a number."""
from numba import cuda


@cuda.jit("float32(float32)", device=True)
def square(v):
    return v * v


@cuda.jit("void(float32[::1], float32[::1])")
def squares(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = square(x)
