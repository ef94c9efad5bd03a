# expect: 14:9: with statement: context managers are not supported in kernels
"""Uses a context manager around the body (as one would with a lock on the CPU)."""
import threading

from numba import cuda

LOCK = threading.Lock()


@cuda.jit("void(float32[::1], float32[::1])")
def accumulate(x, total):
    i = cuda.grid(1)
    if i < x.shape[0]:
        with LOCK:
            total[0] += x[i]
