# expect: 10:9: try statement: kernels cannot handle exceptions
"""Guards a division with try/except."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1], float32[::1])")
def ratio(a, b, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        try:
            out[i] = a[i] / b[i]
        except ZeroDivisionError:
            out[i] = 0.0
