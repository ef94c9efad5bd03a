# expect: 8:11: multi-dimensional slice: a slice whose last dimension is an integer index is strided in every dimension
"""Slices a column out of a 2-D array (each element a row apart)."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[::1])")
def column_sum(m, out):
    col = m[0:2, 1]
    out[0] = col[0] + col[1]
