# expect: 10:22: sum() of a generator expression: numba-cuda sums an array, a tuple or a range, not a generator
"""Sums a row with the sum builtin over a generator."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[::1])")
def row_sum(m, out):
    i = cuda.grid(1)
    if i < m.shape[0]:
        out[i] = sum(m[i, j] for j in range(m.shape[1]))
