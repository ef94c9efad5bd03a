# expect: 8:14: array index: indices must be integers, got float64
"""A float index inside a device function."""
from numba import cuda


@cuda.jit(device=True)
def middle(x):
    return x[x.shape[0] / 2]


@cuda.jit("void(float32[::1], float32[::1])")
def centre(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] - middle(x)
