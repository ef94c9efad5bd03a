# expect: 10:33: 'in' comparison: only <, <=, >, >=, ==, != compare numbers
"""Tests membership in a tuple of labels."""
from numba import cuda


@cuda.jit("void(int32[::1], int32[::1])")
def is_edge(labels, out):
    i = cuda.grid(1)
    if i < labels.shape[0]:
        out[i] = 1 if labels[i] in (3, 7) else 0
