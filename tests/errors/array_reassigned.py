# expect: 10:9: 'x' reassigned: it already names an array or a cuda object
"""Reuses the parameter name for the loaded element."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def square(x, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        x = x[i]
        out[i] = x * x
