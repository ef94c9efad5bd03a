# expect: 8:17: for loop over a tuple of arrays: only a tuple of numbers is iterated here
"""Iterates over a tuple of two arrays (Numba picks each array by index; here write the body once per array)."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def clear(a, b):
    for arr in (a, b):
        arr[cuda.threadIdx.x] = 0
