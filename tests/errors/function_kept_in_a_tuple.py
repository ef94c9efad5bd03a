# expect: 8:12: function 'cuda.atomic.add' used as a value: it can be called, or passed to a device function as an argument, not kept in a variable or a tuple
"""Keeps cuda.atomic functions in a tuple to pick one at run time, which has no C form here."""
from numba import cuda


@cuda.jit("void(float64[::1], int64)")
def bump(ary, which):
    ops = (cuda.atomic.add, cuda.atomic.sub)
    ary[which] = len(ops)
