# expect: 10:9: syntax error: 'break' outside loop
"""Uses break to leave the kernel early (meant return)."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def copy(x, out):
    i = cuda.grid(1)
    if i >= x.shape[0]:
        break
    out[i] = x[i]
