# expect: 7:57: @cuda.jit option 'fast_math': this option is not understood by numba2cuda
"""Misspells the fastmath option."""
from numba import cuda
import math


@cuda.jit("void(float32[::1], float32[::1])", fast_math=True)
def fast_exp(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = math.exp(x[i])
