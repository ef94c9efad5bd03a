# expect: 7:5: kernel 'add' without types: the types of a, b, out are unknown (Numba learns them at the first launch)
"""A lazily compiled kernel: no signature, no annotations."""
from numba import cuda


@cuda.jit
def add(a, b, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a[i] + b[i]
