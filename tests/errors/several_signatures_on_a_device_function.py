# expect: 6:11: several signatures on a device function: a device function is compiled for the argument types each call passes
"""Gives a device function two signatures, as only a kernel may have."""
from numba import cuda


@cuda.jit(["float32(float32)", "float64(float64)"], device=True)
def square(v):
    return v * v


@cuda.jit("void(float32[::1])")
def squares(a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = square(a[i])
