# expect: 11:18: math.atan2(): takes 2 argument(s), got 1
"""Calls math.atan2 with one argument."""
from numba import cuda
import math


@cuda.jit("void(float32[::1], float32[::1], float32[::1])")
def angle(y, x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = math.atan2(y[i] / x[i])
