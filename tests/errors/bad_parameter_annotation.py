# expect: ?
"""Annotates a parameter with a NumPy dtype object that is not a Numba type."""
from numba import cuda
import numpy as np


@cuda.jit
def scale(x: "float32[::1]", out: "float32[::1]", a: "real"):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = a * x[i]
