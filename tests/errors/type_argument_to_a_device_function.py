# expect: 13:28: type argument 'float32': numba2cuda does not specialise a device function on a type passed to it
"""Passes a Numba type to a device function, which casts with it."""
from numba import cuda, float32


@cuda.jit(device=True)
def convert(x, ty):
    return ty(x)


@cuda.jit("void(float64[::1], float32[::1])")
def k(a, out):
    out[0] = convert(a[0], float32)
