# expect: 12:25: call to np.median(): is not supported in kernels
# expect: 19:25: unknown name 'SCALE': it is not a parameter, local variable, module constant or import
"""One mistake in each of two kernels: both must be reported in one run."""
from numba import cuda
import numpy as np


@cuda.jit("void(float32[::1], float32[::1])")
def centre(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] - np.median(x)


@cuda.jit("void(float32[::1], float32[::1])")
def scale(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] * SCALE
