# expect: 7:1: async def: kernels and device functions cannot be coroutines
"""A kernel declared async: Numba cannot compile a coroutine (numba2cuda once translated it as if it were a def)."""
from numba import cuda


@cuda.jit("void(float32[::1])")
async def fill(out):
    out[cuda.grid(1)] = 1.0
