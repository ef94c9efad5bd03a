# expect: 8:5: augmented assignment: only scalar variables and array elements
"""Adds one array to another with +=, as in NumPy."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def accumulate(x, out):
    out += x
