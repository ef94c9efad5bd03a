# expect: ?
"""Keeps a pair of loaded values in one tuple variable."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def diff(x, out):
    i = cuda.grid(1)
    if i + 1 < x.shape[0]:
        pair = (x[i], x[i + 1])
        out[i] = pair[1] - pair[0]
