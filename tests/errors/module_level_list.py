# expect: 12:21: module variable 'WEIGHTS': is a Python list, and Numba rejects a global list in a kernel
"""A module-level list read in a kernel: Numba rejects a global list (it accepts a tuple); numba2cuda once
read it as if it were a tuple."""
from numba import cuda

WEIGHTS = [0.25, 0.5, 0.25]


@cuda.jit("void(float32[::1], float32[::1])")
def smooth(x, out):
    i = cuda.grid(1)
    out[i] = x[i] * WEIGHTS[1]
