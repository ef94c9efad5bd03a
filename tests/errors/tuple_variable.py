# expect: 10:9: tuple variable: must be unpacked where it is made
"""Swaps neighbours through a tuple variable (the tuple must hold the old values)."""
from numba import cuda


@cuda.jit("void(float32[::1])")
def swap_pairs(x):
    i = 2 * cuda.grid(1)
    if i + 1 < x.shape[0]:
        pair = (x[i], x[i + 1])
        x[i] = pair[1]
        x[i + 1] = pair[0]
