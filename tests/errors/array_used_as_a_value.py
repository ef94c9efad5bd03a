# expect: 8:14: array used as a value: 'x' is an array here
"""Whole-array arithmetic, as one would write it in NumPy."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def double(x, out):
    out[0] = x * 2.0
