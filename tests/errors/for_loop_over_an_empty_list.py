# expect: 10:14: for loop over an empty list: numba-cuda cannot type an empty list's items
"""Iterates an empty list, left over from a refactoring: numba-cuda cannot infer the type of its items (a loop over
a list literal with items, `for w in [0.25, 0.5]`, compiles and is translated)."""
from numba import cuda


@cuda.jit("void(float32[::1])")
def total(out):
    acc = 0.0
    for w in []:
        acc += w
    out[0] = acc
