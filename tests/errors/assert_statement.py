# expect: 8:5: assert statement: asserts are not translated
"""Asserts the arrays have the same length."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def copy(x, out):
    assert x.shape[0] == out.shape[0]
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i]
