# expect: 11:19: lambda called where it is made: numba2cuda translates a lambda the kernel binds to a name
"""Applies a transfer function written as a lambda where it is made (a lambda bound to a name is a function of
the kernel; one called in place is not)."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def apply(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = (lambda v: v * v + 1.0)(x[i])
