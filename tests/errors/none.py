# expect: 12:14: None: kernels have no None value
"""Stores None as a 'not found' marker (a local set to None and later to numbers is Numba's Optional instead)."""
from numba import cuda


@cuda.jit("void(int32[::1], int32, int32[::1])")
def find(x, key, pos):
    for k in range(x.shape[0]):
        if x[k] == key:
            pos[0] = k
            return
    pos[0] = None
