# expect: 1:1: no @cuda.jit kernel found
"""The user decorated the function with numba.njit (a CPU function) instead of cuda.jit."""
import numba
import numpy as np


@numba.njit
def add(a, b, out):
    for i in range(out.shape[0]):
        out[i] = a[i] + b[i]
