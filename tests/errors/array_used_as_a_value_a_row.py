# expect: 9:9: array used as a value: 'inp[i]' is an array here
"""One index into a 2-D array is a row: `inp[i] * s` is array arithmetic, which kernels cannot allocate."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[:, ::1], float64)")
def scale_rows(inp, out, s):
    i = cuda.grid(1)
    v = inp[i] * s
    out[i, 0] = v
