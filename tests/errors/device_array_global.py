# expect: 12:12: 'OFFSETS': is a device array: Numba captures its pointer, so the kernel sees what it holds when it runs, not a constant
"""A device function reads a device array held in a global: Numba passes its pointer, so later copies into it
reach the code; a kernel takes such an array as a parameter after its own, a device function cannot."""
import numpy as np
from numba import cuda

OFFSETS = cuda.to_device(np.arange(8, dtype=np.float32))


@cuda.jit(device=True)
def offset(i):
    return OFFSETS[i % 8]


@cuda.jit("void(float32[::1])")
def shift(a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = a[i] + offset(i)
