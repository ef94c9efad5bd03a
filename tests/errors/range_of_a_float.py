# expect: 8:5: range() of a float: range takes integers
"""Loops up to a float bound."""
from numba import cuda


@cuda.jit("void(float32[::1], float32)")
def ramp(out, n):
    for k in range(n):
        out[k] = k
