# expect: 11:5: kernel 'scale' without types: the types of factor are unknown (Numba learns them at the first launch); the types given name 'fctor', which 'scale' does not have (its parameters: a, factor)
"""Declares the types of its kernel with a typo in one name: the message says which name matches no parameter,
rather than only that the other parameter's type is missing."""
from numba import cuda


NUMBA2CUDA_TYPES = {"scale": "a=float32[::1], fctor=float32"}


@cuda.jit
def scale(a, factor):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= factor
