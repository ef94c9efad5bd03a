# expect: 10:24: print(..., end=...): print keywords are not supported
"""Prints without a newline."""
from numba import cuda


@cuda.jit("void(float32[::1])")
def dump(x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        print(i, x[i], end="")
