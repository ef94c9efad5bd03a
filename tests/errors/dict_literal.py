# expect: 9:15: dict literal: kernels cannot use dicts
"""Looks up weights in a dict."""
from numba import cuda


@cuda.jit("void(int32[::1], float32[::1])")
def weigh(labels, out):
    i = cuda.grid(1)
    weights = {0: 0.5, 1: 2.0}
    if i < labels.shape[0]:
        out[i] = weights[labels[i]]
