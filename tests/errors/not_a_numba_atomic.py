# expect: 10:9: cuda.atomic.mul: is not a Numba atomic
"""Uses an atomic multiply, which Numba does not provide."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def product(x, acc):
    i = cuda.grid(1)
    if i < x.shape[0]:
        cuda.atomic.mul(acc, 0, x[i])
