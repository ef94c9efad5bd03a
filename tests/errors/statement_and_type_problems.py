# expect: 11:5: del statement: kernel variables cannot be deleted
# expect: 18:13: array index: indices must be integers, got float64
"""A statement error in one kernel and a type error in the other: both must be reported."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def checked_copy(x, out):
    i = cuda.grid(1)
    out[i] = x[i]
    del i


@cuda.jit("void(float32[::1], float32[::1])")
def halve_index(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i / 2] = x[i]
