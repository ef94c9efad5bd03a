# expect: 10:18: 'factor' used before assignment: no assignment of it reaches this use
"""Uses the scale before the line that sets it."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def scale(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = factor * x[i]
    factor = 2.0
