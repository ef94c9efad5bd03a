# expect: ?
"""Whole-array arithmetic, as one would write it in NumPy."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def double(x, out):
    out[0] = x * 2.0
