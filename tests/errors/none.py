# expect: 8:13: None: kernels have no None value
"""Uses None as a 'not found' marker."""
from numba import cuda


@cuda.jit("void(int32[::1], int32, int32[::1])")
def find(x, key, pos):
    found = None
    for k in range(x.shape[0]):
        if x[k] == key:
            found = k
    pos[0] = found
