# expect: 6:20: NUMBA2CUDA_TYPES: must be a dict literal
"""The static types declaration built by a call: numba2cuda does not run the module."""
from numba import cuda

TYPES = "a=float32[::1], b=float32[::1], out=float32[::1]"
NUMBA2CUDA_TYPES = dict(add=TYPES)


@cuda.jit
def add(a, b, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a[i] + b[i]
