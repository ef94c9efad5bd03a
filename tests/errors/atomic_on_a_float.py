# expect: 10:9: cuda.atomic.and_() on float32: Numba supports it for kinds 'iu' only
"""A bitwise atomic on a float array."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def mask_all(x, acc):
    i = cuda.grid(1)
    if i < x.shape[0]:
        cuda.atomic.and_(acc, 0, x[i])
