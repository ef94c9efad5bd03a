# expect: 10:12: len() of 'x': a CPointer carries no length (Numba gives it none either)
"""Asks a raw pointer for its length."""
from numba import cuda
from numba.cuda import types


@cuda.jit(types.void(types.CPointer(types.uint8)))
def add_one(x):
    i = cuda.grid(1)
    if i < len(x):
        x[i] += 1
