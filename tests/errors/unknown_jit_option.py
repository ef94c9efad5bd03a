# expect: 7:57: @cuda.jit option 'fast_math': numba-cuda has no such option: compiling the kernel raises TypeError (unexpected keyword argument 'fast_math'), so Numba refuses it too
"""Misspells the fastmath option."""
from numba import cuda
import math


@cuda.jit("void(float32[::1], float32[::1])", fast_math=True)
def fast_exp(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = math.exp(x[i])
