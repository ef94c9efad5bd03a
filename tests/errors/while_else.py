# expect: 14:5: while ... else: loop else clauses are not supported
"""Linear search with while ... else."""
from numba import cuda


@cuda.jit("void(int32[::1], int32, int32[::1])")
def find(x, key, pos):
    i = 0
    while i < x.shape[0]:
        if x[i] == key:
            pos[0] = i
            break
        i += 1
    else:
        pos[0] = -1
