# expect: 12:5: for ... else: loop else clauses are not supported
"""Search with for ... else."""
from numba import cuda


@cuda.jit("void(int32[::1], int32, int32[::1])")
def find(x, key, pos):
    for k in range(x.shape[0]):
        if x[k] == key:
            pos[0] = k
            break
    else:
        pos[0] = -1
