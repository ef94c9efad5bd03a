# expect: 12:9: del statement: kernel variables cannot be deleted
"""Deletes a temporary, as one might to free memory on the CPU."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def square(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        t = x[i]
        out[i] = t * t
        del t
