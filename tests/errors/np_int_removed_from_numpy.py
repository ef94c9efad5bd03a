# expect: 12:16: call to np.int(): np.int was NumPy's alias of Python's int, removed in NumPy 1.24
"""Divides each index into steps with np.int, as code written for NumPy 1.x did; NumPy 1.24 removed the alias."""
import numpy as np
from numba import cuda

STEP = 3.0


@cuda.jit("void(int64[::1])")
def steps(a):
    i = cuda.grid(1)
    a[i] = i + np.int(i / STEP)
