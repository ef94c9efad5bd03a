# expect: 20:13: 'r' reassigned: it holds a tuple of 2 and now gets a number
"""The same variable holds a pair on one branch and a number on the other."""
from numba import cuda


@cuda.jit(device=True)
def minmax(a, b):
    if a < b:
        return a, b
    return b, a


@cuda.jit("void(float32[::1], float32[::1])")
def spread(x, out):
    i = cuda.grid(1)
    if i + 1 < x.shape[0]:
        if x[i] > 0:
            r = minmax(x[i], x[i + 1])
        else:
            r = 0.0
        out[i] = r
