# expect: 11:5: expression statement: has no effect
"""Forgets the parentheses on cuda.syncthreads."""
from numba import cuda, float32


@cuda.jit("void(float32[::1], float32[::1])")
def reverse_block(x, out):
    buf = cuda.shared.array(128, float32)
    t = cuda.threadIdx.x
    buf[t] = x[cuda.grid(1)]
    cuda.syncthreads
    out[cuda.grid(1)] = buf[127 - t]
