# expect: 11:19: list comprehension: kernels cannot build Python lists
"""Sum of squares per row: the user builds a Python list inside the kernel."""
from numba import cuda
import numpy as np


@cuda.jit("void(float32[:, ::1], float32[::1])")
def row_sum_squares(m, out):
    i = cuda.grid(1)
    if i < m.shape[0]:
        squares = [m[i, j] * m[i, j] for j in range(m.shape[1])]
        out[i] = squares[0]
