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


def example(rng, size="small"):
    """One run: inputs, launch configuration and the expected outputs."""
    n = 1000 if size == "small" else 1 << 26
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, dtype=np.float32)
    return dict(kernel=vector_add, griddim=math.ceil(n / THREADS), blockdim=THREADS,
                shared=0, args=[a, b, out], expected={2: reference(a, b)},
                rtol=0, atol=0)
