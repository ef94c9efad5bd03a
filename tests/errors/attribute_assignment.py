# expect: 8:5: attribute assignment: kernels cannot set attributes
"""Tries to set the block size from inside the kernel."""
from numba import cuda


@cuda.jit("void(float32[::1])")
def setup(x):
    cuda.blockDim.x = 128
    x[cuda.grid(1)] = 0.0
