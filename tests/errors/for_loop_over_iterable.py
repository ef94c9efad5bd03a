# expect: 9:14: for loop over this iterable: only range() loops are supported
"""Iterates over the array's elements directly."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def total(x, out):
    acc = 0.0
    for v in x:
        acc += v
    out[0] = acc
