# expect: 7:14: default parameter value: kernels and device functions cannot have defaults
"""A device function with a default argument."""
from numba import cuda


@cuda.jit("float32(float32, float32)", device=True)
def clamp(v, hi=1.0):
    return min(v, hi)


@cuda.jit("void(float32[::1], float32[::1])")
def clamp_all(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = clamp(x[i], 1.0)
