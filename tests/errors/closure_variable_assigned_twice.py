# expect: 19:27: closure variable 'scale': is assigned more than once in 'make_scaler', so its value is unknown
"""The factory changes the captured value after defining the kernel, and never launches it: the kernel compiles
at its first launch, somewhere else, and sees whatever the cell holds then."""
import numpy as np

NUMBA2CUDA_TYPES = {"scale_all": "a=float32[::1]"}


def make_scaler(fast):
    from numba import cuda

    scale = 2.0
    scale = 3.0 if fast else scale

    @cuda.jit
    def scale_all(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] = a[i] * scale

    return scale_all
