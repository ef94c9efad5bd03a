# expect: 11:29: imported name 'BLOCK': 'BLOCK' comes from lab_settings, which is not installed here
"""The block size lives in a settings package that is neither next to the file nor installed where numba2cuda runs."""
from numba import cuda, float32

from lab_settings import BLOCK


@cuda.jit("void(float32[::1], float32[::1])")
def copy_through_shared(x, out):
    i = cuda.grid(1)
    buf = cuda.shared.array(BLOCK, float32)
    buf[cuda.threadIdx.x] = x[i]
    cuda.syncthreads()
    out[i] = buf[cuda.threadIdx.x]
