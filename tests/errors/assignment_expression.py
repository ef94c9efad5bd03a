# expect: 9:28: assignment expression (:=): not supported
"""Uses the walrus operator in a condition."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def positive(x, out):
    i = cuda.grid(1)
    if i < x.shape[0] and (v := x[i]) > 0:
        out[i] = v
