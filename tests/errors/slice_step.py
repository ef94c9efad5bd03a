# expect: 8:13: slice step: only step 1 slices are supported
"""Takes every other element with a stepped slice."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def evens(x, out):
    v = x[::2]
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = v[i]
