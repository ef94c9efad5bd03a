# expect: 17:9: tuple variable: must be unpacked where it is made
"""Keeps a device function's pair result in one name, then unpacks it."""
from numba import cuda


@cuda.jit(device=True)
def minmax(a, b):
    if a < b:
        return a, b
    return b, a


@cuda.jit("void(float32[::1], float32[::1])")
def spread(x, out):
    i = cuda.grid(1)
    if i + 1 < x.shape[0]:
        pair = minmax(x[i], x[i + 1])
        lo, hi = pair
        out[i] = hi - lo
