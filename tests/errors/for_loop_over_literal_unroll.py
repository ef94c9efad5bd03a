# expect: 10:16: for loop over literal_unroll(): numba2cuda does not unroll a loop per item type
"""Unrolls a loop over a tuple of arrays with Numba's literal_unroll."""
from numba import cuda, literal_unroll


@cuda.jit("void(float64[::1], float64[::1], float64[::1])")
def total(a, b, out):
    s = 0.0
    arrays = (a, b)
    for arr in literal_unroll(arrays):
        s += arr[0]
    out[0] = s
