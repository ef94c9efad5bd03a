# expect: 10:9: expression statement: has no effect
"""A comparison written where an assignment was meant."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def copy(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] == x[i]
