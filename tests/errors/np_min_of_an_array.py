# expect: 10:14: np.min() of an array: numba-cuda cannot compile it in a kernel
"""Takes the smallest value of a row with np.min, which numba-cuda compiles in a kernel only with its runtime (NRT) on."""
import numpy as np
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[::1])")
def row_min(m, out):
    i = cuda.grid(1)
    out[i] = np.min(m[i])
