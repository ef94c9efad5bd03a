# expect: 9:65: @cuda.jit option 'launch_bounds=threads': is not a constant numba2cuda can evaluate without running the module
"""The launch bounds come from a factory's parameter, and the factory is called with a computed value."""
import os

from numba import cuda


def make_copy(threads):
    @cuda.jit("void(float32[::1], float32[::1])", launch_bounds=threads)
    def copy(x, out):
        i = cuda.grid(1)
        if i < x.shape[0]:
            out[i] = x[i]
    return copy


copy_kernel = make_copy(int(os.environ.get("THREADS", "256")))
