# expect: 10:9: assignment to a slice or row: assign element by element
"""Zeroes a whole row with one assignment, as in NumPy."""
from numba import cuda


@cuda.jit("void(float32[:, ::1])")
def clear_rows(m):
    i = cuda.grid(1)
    if i < m.shape[0]:
        m[i] = 0.0
