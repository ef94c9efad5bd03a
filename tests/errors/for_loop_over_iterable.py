# expect: 9:15: for loop over this iterable: only range() loops are supported
"""Iterates over a tuple of weights."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def total(x, out):
    acc = 0.0
    for w in (0.25, 0.5, 0.25):
        acc += w * x[0]
    out[0] = acc
