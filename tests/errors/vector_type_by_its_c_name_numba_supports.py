# expect: 8:9: call to cuda.short2(): Numba supports it in kernels; numba2cuda does not translate it yet
"""Makes a vector with cuda.short2, numba-cuda's C name of int16x2; was "is not supported in kernels"."""
from numba import cuda


@cuda.jit("void(int16[::1])")
def pair(out):
    s = cuda.short2(3, 4)
    out[0] = s.x + s.y
