# expect: 8:29: array dtype: must be a NumPy or Numba scalar type
"""Gives the local array's dtype as a Python class that is no number type."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def window(x, out):
    w = cuda.local.array(3, list)
    i = cuda.grid(1)
    if 0 < i < x.shape[0] - 1:
        for k in range(3):
            w[k] = x[i - 1 + k]
        out[i] = (w[0] + w[1] + w[2]) / 3
