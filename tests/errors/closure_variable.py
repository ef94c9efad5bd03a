# expect: 11:29: closure variable 'factor': is a parameter of 'make_scaler', known only when it is called
"""A kernel factory: the kernel captures the factory's argument."""
from numba import cuda


def make_scaler(factor):
    @cuda.jit("void(float32[::1], float32[::1])")
    def scale(x, out):
        i = cuda.grid(1)
        if i < x.shape[0]:
            out[i] = x[i] * factor

    return scale
