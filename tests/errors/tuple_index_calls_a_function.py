# expect: 8:14: tuple index: an index that calls a function is read once per item here
"""Indexes a tuple at run time with an index computed by a call (bind it to a name first)."""
from numba import cuda


@cuda.jit("void(int64[::1])")
def pick(out):
    out[0] = (1, 2, 3)[min(cuda.threadIdx.x, 2)]
