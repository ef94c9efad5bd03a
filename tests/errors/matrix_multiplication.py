# expect: 10:20: matrix multiplication (@): not supported on arrays in kernels
"""Multiplies matrices with the @ operator."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[:, ::1], float32[:, ::1])")
def matmul(a, b, c):
    i, j = cuda.grid(2)
    if i < c.shape[0] and j < c.shape[1]:
        c[i, j] = (a @ b)[i, j]
