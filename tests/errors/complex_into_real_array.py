# expect: 11:9: complex128 stored into a float32 array: Numba cannot convert a complex number to a real one
"""Rotates by i with a complex literal, then stores the complex result into a real array."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def rotate(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        z = x[i] * 1j
        out[i] = z
