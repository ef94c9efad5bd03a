# expect: 15:18: 'and' of non-boolean values with a call: Python returns one of the operands, which would be evaluated twice here
"""Uses Python's `a and b` to pick a value, the first operand a device function's result: C would call it twice."""
from numba import cuda


@cuda.jit(device=True)
def scaled(x):
    return x * 2.0


@cuda.jit("void(float32[::1], float32[::1], float32[::1])")
def pick(a, b, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = scaled(a[i]) and b[i]
