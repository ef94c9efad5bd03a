# expect: 11:13: raise statement: kernels cannot raise exceptions
"""Checks its input and raises, as it would on the CPU."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def safe_sqrt(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        if x[i] < 0:
            raise ValueError("negative input")
        out[i] = x[i] ** 0.5
