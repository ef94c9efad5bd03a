# expect: 16:5: call to kernel 'square': kernels cannot be called from device code
# expect: 17:5: call to kernel 'square': kernels cannot be called from device code
"""Calls another kernel as if it were a device function."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def square(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] * x[i]


@cuda.jit("void(float32[::1], float32[::1])")
def square_twice(x, out):
    square(x, out)
    square(out, out)
