# expect: 8:29: cuda.shared.array() shape: must be integer constants (literals, module-level constants, or arithmetic on them)
"""Sizes the shared buffer with a kernel argument."""
from numba import cuda, float32


@cuda.jit("void(float32[::1], float32[::1], int32)")
def block_sum(x, out, block):
    buf = cuda.shared.array(block, float32)
    tid = cuda.threadIdx.x
    buf[tid] = x[cuda.grid(1)]
    cuda.syncthreads()
    if tid == 0:
        acc = 0.0
        for k in range(block):
            acc += buf[k]
        out[cuda.blockIdx.x] = acc
