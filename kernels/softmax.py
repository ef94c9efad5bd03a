"""Row-wise softmax: one block per row, shared-memory tree reductions.

Each block of THREADS threads owns one row.  Threads walk the row with a stride of
THREADS (so any number of columns works), then the block combines the per-thread results
with a tree reduction in shared memory: at each step the first half of the active threads
folds in the second half, until ``buf[0]`` holds the answer.  This is done twice, for the
row's maximum (subtracted for numerical stability) and for the sum of exponentials.

Everything stays float32: ``float32(...)`` for the constants, and ``math.exp`` of a float32
is a float32 (``expf``).  A bare ``0.0`` would be a float64 and drag the sums with it.

Launch:  ``softmax[rows, THREADS](x, out)``
"""
import math

import numpy as np
from numba import cuda, float32

THREADS = 256


@cuda.jit("void(float32[:, ::1], float32[:, ::1])")
def softmax(x, out):
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    ncols = x.shape[1]
    buf = cuda.shared.array(THREADS, float32)

    # 1. the row's maximum
    m = float32(-math.inf)
    for c in range(tid, ncols, THREADS):
        m = max(m, x[row, c])
    buf[tid] = m
    cuda.syncthreads()
    s = THREADS // 2
    while s > 0:
        if tid < s:
            buf[tid] = max(buf[tid], buf[tid + s])
        cuda.syncthreads()
        s //= 2
    row_max = buf[0]
    cuda.syncthreads()             # everyone has read buf[0] before it is reused

    # 2. the sum of exp(x - max)
    acc = float32(0.0)
    for c in range(tid, ncols, THREADS):
        acc += math.exp(x[row, c] - row_max)
    buf[tid] = acc
    cuda.syncthreads()
    s = THREADS // 2
    while s > 0:
        if tid < s:
            buf[tid] += buf[tid + s]
        cuda.syncthreads()
        s //= 2
    total = buf[0]

    # 3. normalise
    for c in range(tid, ncols, THREADS):
        out[row, c] = math.exp(x[row, c] - row_max) / total


def reference(x):
    """NumPy reference."""
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


# The sizes `numba2cuda verify` sweeps: 2 rows of n columns (block-1, block+1, primes, 1).
VERIFY_SIZES = ("small", 1, THREADS - 1, THREADS + 1, 67, 97)


def example(rng, size="small"):
    """One run: inputs, launch configuration and the expected outputs.

    size: "small" (2 x 300), "bench" (4096 x 4096) or an int n (2 rows of n columns).
    """
    rows, cols = {"small": (2, 300), "bench": (4096, 4096)}[size] if isinstance(size, str) else (2, int(size))
    x = (4 * rng.standard_normal((rows, cols))).astype(np.float32)
    out = np.zeros_like(x)
    return dict(kernel=softmax, griddim=rows, blockdim=THREADS, shared=0,
                args=[x, out], expected={1: reference(x)}, rtol=1e-5, atol=1e-7)
