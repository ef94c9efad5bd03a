# expect: 6:11: several signatures: numba2cuda translates one signature per kernel
"""Eagerly compiled for two element types."""
from numba import cuda


@cuda.jit(["void(float32[::1], float32[::1])", "void(float64[::1], float64[::1])"])
def double(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = 2 * x[i]
