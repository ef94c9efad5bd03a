# expect: 15:27: closure variable 'scale': is assigned more than once in 'test_scaling', so its value is unknown
"""A test changes the captured value after the first launch (Numba keeps the first; nobody can tell which)."""
import numpy as np


def test_scaling():
    from numba import cuda

    scale = 2.0

    @cuda.jit("void(float32[::1])")
    def scale_all(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] = a[i] * scale

    a = np.ones(8, dtype=np.float32)
    scale_all[1, 8](a)
    scale = 3.0
    scale_all[1, 8](a)
