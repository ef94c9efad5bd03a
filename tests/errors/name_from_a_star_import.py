# expect: 9:36: unknown name 'BLOCK': it may come from `from lab_config import *`, which numba2cuda cannot read without running it
"""The block size comes in through a star import of a module that is not next to the file."""
from numba import cuda, float32
from lab_config import *


@cuda.jit("void(float32[::1], float32[::1])")
def reverse_block(x, out):
    tile = cuda.shared.array(shape=BLOCK, dtype=float32)
    t = cuda.threadIdx.x
    tile[t] = x[cuda.grid(1)]
    cuda.syncthreads()
    out[cuda.grid(1)] = tile[cuda.blockDim.x - 1 - t]
