# expect: 10:5: return: returns Tuple(float32, float64) here but float64 elsewhere
"""A device function that returns a pair on one path and a number on the other."""
from numba import cuda


@cuda.jit(device=True)
def split(v):
    if v < 0:
        return 0.0
    return v, v * 2


@cuda.jit("void(float32[::1], float32[::1])")
def apply(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        a, b = split(x[i])
        out[i] = a + b
