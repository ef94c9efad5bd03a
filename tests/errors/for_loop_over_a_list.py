# expect: 9:14: for loop over a list: kernels cannot build Python lists (Numba's CUDA target refuses them too)
"""Iterates a list of weights, which a kernel cannot build; a tuple would do."""
from numba import cuda


@cuda.jit("void(float32[::1])")
def total(out):
    acc = 0.0
    for w in [0.25, 0.5, 0.25]:
        acc += w
    out[0] = acc
