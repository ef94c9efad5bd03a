# expect: 17:8: 'b' used where it may be None: it holds the result of a function that returns None on some paths: Numba raises where such a None is used, and the translation does not
"""Numba stops the thread where a None result is used as a number; the test that guards it must come first."""
from numba import cuda


@cuda.jit(device=True)
def pick(v, n):
    if v < 0:
        return None
    return int(v) % n


@cuda.jit("void(float64[::1], int32[::1])")
def count(vals, counts):
    i = cuda.grid(1)
    b = pick(vals[i], counts.shape[0])
    if b >= 0:
        counts[b] += 1
