# expect: 10:18: 'and' of non-boolean values: Python returns one of the operands, not a bool
"""Uses Python's `a and b` to pick a value."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1], float32[::1])")
def pick(a, b, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = a[i] and b[i]
