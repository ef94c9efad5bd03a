"""Element-wise vector addition: the "hello world" of CUDA.

``cuda.grid(1)`` is ``blockIdx.x * blockDim.x + threadIdx.x``.  The launch rounds the
number of threads up to whole blocks, so the last block has threads with nothing to do:
the guard ``if i < n`` keeps them from writing past the end.

Launch:  ``vector_add[math.ceil(n / 128), 128](a, b, out)``
"""
import math

import numpy as np
from numba import cuda

THREADS = 128


@cuda.jit("void(float32[::1], float32[::1], float32[::1])")
def vector_add(a, b, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a[i] + b[i]


def reference(a, b):
    """NumPy reference."""
    return a + b


# The sizes `numba2cuda verify` sweeps: n elements (block-1, block+1, primes, 1).
VERIFY_SIZES = ("small", 1, THREADS - 1, THREADS + 1, 67, 97)


# The sizes `numba2cuda bench` times: "bench", where device time dominates, and a size a program
# launches many times, where the host cost of a launch is as large as the kernel.
BENCH_SIZES = ("bench", 1 << 20)


def example(rng, size="small"):
    """One run: inputs, launch configuration and the expected outputs.

    size: "small" (1000 elements), "bench" (2**26) or an int n (n elements).
    """
    n = {"small": 1000, "bench": 1 << 26}[size] if isinstance(size, str) else int(size)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, dtype=np.float32)
    return dict(kernel=vector_add, griddim=math.ceil(n / THREADS), blockdim=THREADS,
                shared=0, args=[a, b, out], expected={2: reference(a, b)},
                rtol=0, atol=0, bytes=a.nbytes + b.nbytes + out.nbytes)
