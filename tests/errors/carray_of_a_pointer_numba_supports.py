# expect: 9:9: call to cuda.np.numpy_support.carray(): Numba supports it in kernels; numba2cuda does not translate it yet
"""Views a foreign pointer as an array with numba-cuda's carray, which it compiles; was "is not supported"."""
from numba import cuda, types
from numba.cuda.np.numpy_support import carray


@cuda.jit(types.void(types.CPointer(types.float32)))
def bump(p):
    a = carray(p, (4,), dtype=cuda.float32)
    a[0] += 1.0
