# expect: 9:14: for loop over sorted: numba2cuda iterates range(), arrays, tuples, zip() and enumerate() of them
"""Iterates over sorted(x), which has no meaning on the device."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def total(x, out):
    acc = 0.0
    for w in sorted(x):
        acc += w
    out[0] = acc
