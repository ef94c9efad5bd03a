# expect: 12:29: 'BLOCK': when the module runs
"""The block size is read from the environment when the module is imported."""
import os

from numba import cuda, float32

BLOCK = int(os.environ.get("BLOCK", "128"))


@cuda.jit("void(float32[::1], float32[::1])")
def block_copy(x, out):
    buf = cuda.shared.array(BLOCK, float32)
    t = cuda.threadIdx.x
    buf[t] = x[cuda.grid(1)]
    cuda.syncthreads()
    out[cuda.grid(1)] = buf[t]
