# expect: 15:27: 'OFFSETS': is a device array: Numba captures its pointer, so the kernel sees what it holds when it runs, not a constant
"""Reads a device array held in a global: Numba passes its pointer, so later copies into it reach the kernel."""
import numpy as np


def test_offsets():
    from numba import cuda

    OFFSETS = cuda.to_device(np.arange(8, dtype=np.float32))

    @cuda.jit("void(float32[::1])")
    def shift(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] = a[i] + OFFSETS[i % 8]
