# expect: 8:54: type annotation: unknown type 'real'
"""Annotates the scalar parameter with a type name Numba does not have."""
from numba import cuda
import numpy as np


@cuda.jit
def scale(x: "float32[::1]", out: "float32[::1]", a: "real"):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = a * x[i]
