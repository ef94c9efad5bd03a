# expect: 8:12: negative slice bound: slices with negative bounds are not supported
"""Takes the last four elements with a negative slice bound."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def tail_sum(x, out):
    tail = x[-4:]
    acc = 0.0
    for k in range(4):
        acc += tail[k]
    out[0] = acc
