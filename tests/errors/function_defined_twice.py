# expect: 14:5: function 'add': is defined twice
"""Two kernels with the same name (the second was meant to be add_f64)."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1], float32[::1])")
def add(a, b, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a[i] + b[i]


@cuda.jit("void(float64[::1], float64[::1], float64[::1])")
def add(a, b, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a[i] + b[i]
