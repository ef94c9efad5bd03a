# expect: 10:17: call to math.frexp(): Numba supports it in kernels; numba2cuda does not translate it yet
"""Calls math.frexp, which numba-cuda compiles and numba2cuda's rules do not translate."""
import math
from numba import cuda


@cuda.jit("void(float64[::1], float64[::1])")
def mantissas(x, out):
    i = cuda.grid(1)
    out[i], e = math.frexp(x[i])
