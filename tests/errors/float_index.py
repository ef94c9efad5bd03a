# expect: 10:13: array index: indices must be integers, got float64
"""Downsamples by two; i / 2 is a float in Python 3."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def downsample(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i / 2] = x[i]
