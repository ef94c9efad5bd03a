# expect: 6:11: signature: 'Tuple(float64, int32)': Numba spells a tuple of types Tuple((float64, int32)) (one argument, a tuple), or UniTuple(t, n) when all items share a type; 'Tuple(float64, int32)' fails in Numba
"""Spells a mixed tuple parameter as Tuple(a, b): Numba's signature parser raises a TypeError for it."""
from numba import cuda


@cuda.jit("void(float32[::1], Tuple(float64, int32))")
def scale(out, factors):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = out[i] * factors[0] + factors[1]
