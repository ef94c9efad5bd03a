# expect: 6:11: signature: a kernel must return void
"""A kernel signature with a float32 result type."""
from numba import cuda


@cuda.jit("float32(float32[::1])")
def first(x):
    x[0] = x[1]
