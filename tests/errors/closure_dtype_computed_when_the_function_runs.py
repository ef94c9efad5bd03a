# expect: 14:42: closure variable 'dt': is computed when 'test_copy' runs (by a call), and numba2cuda does not run the module
"""A shared array typed by a dtype the enclosing test computes (numba-cuda's test_sm style): was "must be a NumPy or Numba scalar type"."""
import numpy as np
from numba import cuda
from numba.np import numpy_support as nps


def test_copy():
    arr = np.arange(64)
    dt = nps.from_dtype(arr.dtype)

    @cuda.jit("void(int64[::1], int64[::1])")
    def sm_copy(x, y):
        buf = cuda.shared.array(0, dtype=dt)
        i = cuda.grid(1)
        buf[cuda.threadIdx.x] = x[i]
        cuda.syncthreads()
        y[i] = buf[cuda.threadIdx.x]
