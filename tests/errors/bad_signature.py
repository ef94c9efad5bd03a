# expect: 6:11: signature: unknown element type 'flaot32'
"""A typo in the element type of the signature."""
from numba import cuda


@cuda.jit("void(flaot32[::1], float32[::1])")
def copy(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i]
