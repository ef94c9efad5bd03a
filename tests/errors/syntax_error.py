# expect: 9:22: syntax error: expected ':'
"""A missing colon after the if: the file does not even parse."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def scale(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]
        out[i] = 2.0 * x[i]
