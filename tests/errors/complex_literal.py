# expect: 10:20: complex literal: complex numbers are not supported
"""Rotates by i using a complex literal."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def rotate(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        z = x[i] * 1j
        out[i] = z
