# expect: 11:5: call to cuda.sync_threads(): numba.cuda has no 'sync_threads': Numba raises AttributeError when it compiles the kernel
"""Calls a cuda.* function that Numba does not have (a typo for syncthreads)."""
from numba import cuda, float32


@cuda.jit("void(float32[::1], float32[::1])")
def reverse_block(x, out):
    buf = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    buf[t] = x[cuda.grid(1)]
    cuda.sync_threads()
    out[cuda.grid(1)] = buf[255 - t]
