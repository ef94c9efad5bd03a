# expect: 9:16: for loop over 'x': 'x' has 2 dimensions, and iterating it yields row views
"""Iterates over a 2-D array: Numba yields its rows, which the translation does not make."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[::1])")
def total(x, out):
    acc = 0.0
    for row in x:
        acc += row[0]
    out[0] = acc
