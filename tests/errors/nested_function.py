# expect: 9:5: nested function: functions cannot be defined inside kernels
"""Defines a helper inside the kernel."""
from numba import cuda
import math


@cuda.jit("void(float32[::1], float32[::1])")
def sigmoid_all(x, out):
    def sigmoid(v):
        return 1.0 / (1.0 + math.exp(-v))

    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = sigmoid(x[i])
