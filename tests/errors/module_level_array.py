# expect: 13:18: module-level array: arrays are read through cuda.const.array_like
"""Reads a module-level NumPy array directly."""
from numba import cuda
import numpy as np

TABLE = np.array([1.0, 2.0, 4.0, 8.0], dtype=np.float32)


@cuda.jit("void(int32[::1], float32[::1])")
def lookup(idx, out):
    i = cuda.grid(1)
    if i < idx.shape[0]:
        out[i] = TABLE[idx[i]]
