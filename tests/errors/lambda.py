# expect: 9:9: lambda: kernels cannot create functions
"""Defines the transfer function inline with a lambda."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def apply(x, out):
    i = cuda.grid(1)
    f = lambda v: v * v + 1.0
    if i < x.shape[0]:
        out[i] = f(x[i])
