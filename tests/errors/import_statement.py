# expect: 8:5: import statement: imports belong at module level
"""Imports math inside the kernel."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def roots(x, out):
    import math
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = math.sqrt(x[i])
