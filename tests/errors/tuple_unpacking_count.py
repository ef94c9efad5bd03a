# expect: 8:5: tuple unpacking: 3 names for 2 values
"""Unpacks a 2-D grid index into three names."""
from numba import cuda


@cuda.jit("void(float32[:, ::1])")
def clear(m):
    i, j, k = cuda.grid(2)
    if i < m.shape[0] and j < m.shape[1]:
        m[i, j] = 0.0
