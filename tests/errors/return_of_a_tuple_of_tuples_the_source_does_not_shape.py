# expect: 9:5: return of a tuple of tuples: numba2cuda could not tell from the source
"""Returns an item of a tuple of tuples, itself a tuple: Numba types it; a reading of the source does not."""
from numba import cuda


@cuda.jit(device=True)
def first_half(p):
    halves = ((p[0], p[1]), (p[2], p[3]))
    return halves[0], 1


@cuda.jit("void(float32[::1])")
def use(out):
    h, n = first_half((out[0], out[1], out[2], out[3]))
    out[0] = n
