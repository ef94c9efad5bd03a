# expect: 10:16: assignment of an array to a slice or row: Numba copies the array first, which needs its runtime (NRT)
"""Copies row 0 into every row with one assignment, as in NumPy (a number into a row is translated; an array not)."""
from numba import cuda


@cuda.jit("void(float32[:, ::1])")
def copy_rows(m):
    i = cuda.grid(1)
    if 0 < i < m.shape[0]:
        m[i] = m[0]
