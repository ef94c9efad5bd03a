# expect: 10:18: round(): does not accept arguments of types int64, int64
"""Rounds an integer to tens, which numba-cuda does not compile (its round(x, n) takes floats)."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def cents(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = round(i, -1)
