# expect: 10:16: break in a loop over literal_unroll(): numba2cuda unrolls the loop, one copy of the body per item
"""Stops a literal_unroll loop over a tuple of arrays at the first array that starts with a negative number."""
from numba import cuda, literal_unroll


@cuda.jit("void(float64[::1], float64[::1], float64[::1])")
def total(a, b, out):
    s = 0.0
    arrays = (a, b)
    for arr in literal_unroll(arrays):
        if arr[0] < 0:
            break
        s += arr[0]
    out[0] = s
