# expect: 6:11: signature: has 2 argument types for 3 parameters
"""The signature forgot the size parameter."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def saxpy(x, y, a):
    i = cuda.grid(1)
    if i < x.shape[0]:
        y[i] = a * x[i] + y[i]
