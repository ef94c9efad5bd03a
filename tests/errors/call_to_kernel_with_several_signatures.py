# expect: 15:5: call to kernel 'square': it has several signatures, and device code calls one function
"""Calls a kernel compiled for two signatures from another kernel (a kernel with one is a device function there)."""
from numba import cuda


@cuda.jit(["void(float32[::1], float32[::1])", "void(float64[::1], float64[::1])"])
def square(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] * x[i]


@cuda.jit("void(float32[::1], float32[::1])")
def square_twice(x, out):
    square(x, out)
