# expect: 8:37: range() step of 0: Python raises ValueError for it
"""A range with step 0."""
from numba import cuda


@cuda.jit("void(float32[::1])")
def fill(out):
    for k in range(0, out.shape[0], 0):
        out[k] = 1.0
