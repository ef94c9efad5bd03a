# expect: 15:18: 'clear': no value
"""Uses the result of a device function that returns nothing."""
from numba import cuda


@cuda.jit("void(float32[::1], int64)", device=True)
def clear(x, i):
    x[i] = 0.0


@cuda.jit("void(float32[::1], float32[::1])")
def reset(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = clear(x, i)
