# expect: 5:28: NUMBA2CUDA_TYPES: unknown element type 'float31'
"""A misspelt type in the static types declaration."""
from numba import cuda

NUMBA2CUDA_TYPES = {"add": "a=float31[::1], b=float32[::1], out=float32[::1]"}


@cuda.jit
def add(a, b, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a[i] + b[i]
