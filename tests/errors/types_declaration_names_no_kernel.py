# expect: 6:21: NUMBA2CUDA_TYPES: names 'ad', which is not a @cuda.jit function here
# expect: 10:5: kernel 'add' without types: the types of a, b, out are unknown (Numba learns them at the first launch)
"""A typo in the kernel's name in the static types declaration."""
from numba import cuda

NUMBA2CUDA_TYPES = {"ad": "a=float32[::1], b=float32[::1], out=float32[::1]"}


@cuda.jit
def add(a, b, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a[i] + b[i]
