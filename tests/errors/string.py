# expect: 9:12: string: strings exist only as print() arguments
"""Selects the operation with a string flag."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def activate(x, out):
    i = cuda.grid(1)
    mode = "relu"
    if i < x.shape[0]:
        out[i] = max(x[i], 0.0)
