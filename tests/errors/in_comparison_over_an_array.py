# expect: 10:33: 'in' comparison: only a tuple of numbers can be searched here
"""Tests membership in an array of labels: numba2cuda searches a tuple of numbers only (write the loop)."""
from numba import cuda


@cuda.jit("void(int32[::1], int32[::1], int32[::1])")
def is_edge(labels, edges, out):
    i = cuda.grid(1)
    if i < labels.shape[0]:
        out[i] = 1 if labels[i] in edges else 0
