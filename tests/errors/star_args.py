# expect: 7:5: *args/**kwargs: kernels take a fixed list of positional parameters
"""A kernel that takes a variable number of arrays."""
from numba import cuda


@cuda.jit
def zero_all(*arrays):
    i = cuda.grid(1)
    arrays[0][i] = 0.0
