# expect: 15:47: keyword argument 'hj' of 'clamp': it names no parameter after the positional arguments
"""Calls a device function with a keyword that none of its parameters has (a typo of hi)."""
from numba import cuda


@cuda.jit("float32(float32, float32)", device=True)
def clamp(v, hi=1.0):
    return min(v, hi)


@cuda.jit("void(float32[::1], float32[::1])")
def clamp_all(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = clamp(x[i]) + clamp(x[i], hj=2.0)
