# expect: 11:16: '<<' on a float: bit operations need integers
# expect: 12:13: array index: indices must be integers, got float64
"""Two type errors in one kernel: both must be reported."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def pack(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        bits = x[i] << 2
        out[i / 2] = bits
