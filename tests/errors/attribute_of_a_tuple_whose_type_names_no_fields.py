# expect: 8:14: attribute .x of a tuple: its type names no fields
"""Reads a namedtuple's field, the kernel's signature giving the argument a plain tuple type."""
from numba import cuda


@cuda.jit("void(float64[::1], UniTuple(float64, 2))")
def first(out, p):
    out[0] = p.x
