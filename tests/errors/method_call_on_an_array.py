# expect: 10:18: array method .sum(): numba2cuda translates no array methods
"""Calls an array method, as in NumPy."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[::1])")
def row_sum(m, out):
    i = cuda.grid(1)
    if i < m.shape[0]:
        out[i] = m[i].sum()
