# expect: 10:26: integer constant: 18446744073709551617 does not fit in 64 bits
"""A hash constant that does not fit in 64 bits."""
from numba import cuda


@cuda.jit("void(uint64[::1], uint64[::1])")
def hash_all(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = (x[i] * 0x1_0000_0000_0000_0001) % 1000003
