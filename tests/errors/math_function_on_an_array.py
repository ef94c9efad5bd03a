# expect: 11:42: array used as a value: 'x' is an array here
"""Applies math.exp to a whole array, as np.exp would."""
from numba import cuda
import math


@cuda.jit("void(float32[::1], float32[::1])")
def softplus(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = math.log(1.0 + math.exp(x))
