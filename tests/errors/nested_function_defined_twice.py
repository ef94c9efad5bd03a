# expect: 9:5: nested function 'act': the kernel defines this name again below
"""Defines a helper inside the kernel twice (Numba would call the first before the second is defined)."""
from numba import cuda
import math


@cuda.jit("void(float32[::1], float32[::1])")
def activations(x, out):
    def act(v):
        return 1.0 / (1.0 + math.exp(-v))

    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = act(x[i])

    def act(v):
        return max(v, 0.0)

    if i < x.shape[0]:
        out[i] += act(x[i])
