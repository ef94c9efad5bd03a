# expect: 6:59: @cuda.jit(boundscheck=True): Numba does not bounds-check CUDA kernels
"""Asks Numba for bounds checking, which its CUDA target does not have."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])", boundscheck=True)
def copy(x, out):
    i = cuda.grid(1)
    out[i] = x[i]
