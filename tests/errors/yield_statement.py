# expect: 9:5: yield: kernels cannot be generators
"""A kernel written as a generator: Numba cannot compile it, and numba2cuda names the yield (it once called it
an expression statement with no effect)."""
from numba import cuda


@cuda.jit("void(float32[::1])")
def running(out):
    yield cuda.grid(1)
