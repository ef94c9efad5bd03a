# expect: 11:29: closure variable 'factor': 'factor' belongs to the enclosing function 'make_scaler' and is unknown until it runs
"""A kernel factory: the kernel captures the factory's argument."""
from numba import cuda


def make_scaler(factor):
    @cuda.jit("void(float32[::1], float32[::1])")
    def scale(x, out):
        i = cuda.grid(1)
        if i < x.shape[0]:
            out[i] = x[i] * factor

    return scale
