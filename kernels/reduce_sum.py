"""Sum of a vector: a shared-memory tree reduction per block, then one atomic per block.

Each thread loads one element (zero past the end) into shared memory.  The block then
halves the number of active threads at every step, each adding the element ``s`` places
further on, until ``buf[0]`` holds the block's sum.  Thread 0 adds that partial sum to the
one-element output with ``cuda.atomic.add``, so ``total`` must be zeroed before the launch.

Launch:  ``reduce_sum[math.ceil(n / THREADS), THREADS](x, total)``
"""
import math

import numpy as np
from numba import cuda, float32

THREADS = 128                      # a power of two: the tree halves it down to 1


@cuda.jit("void(float32[::1], float32[::1])")
def reduce_sum(x, total):
    buf = cuda.shared.array(THREADS, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[tid] = x[i] if i < x.shape[0] else float32(0.0)
    cuda.syncthreads()
    s = THREADS // 2
    while s > 0:
        if tid < s:
            buf[tid] += buf[tid + s]
        cuda.syncthreads()         # outside the if: every thread must reach it
        s //= 2
    if tid == 0:
        cuda.atomic.add(total, 0, buf[0])


def reference(x):
    """NumPy reference."""
    return np.array([x.astype(np.float64).sum()], dtype=np.float32)


# The sizes `numba2cuda verify` sweeps (block-1, block+1, primes, 1).
VERIFY_SIZES = ("small", 1, THREADS - 1, THREADS + 1, 67, 97)


# The sizes `numba2cuda bench` times: "bench", where device time dominates, and a size a program
# launches many times, where the host cost of a launch is as large as the kernel.
BENCH_SIZES = ("bench", 1 << 20)


def example(rng, size="small"):
    """One run: inputs, launch configuration and the expected outputs.

    size: "small" (300 values), "bench" (2**26) or an int n.
    """
    n = {"small": 300, "bench": 1 << 26}[size] if isinstance(size, str) else int(size)
    x = rng.random(n, dtype=np.float32)
    total = np.zeros(1, dtype=np.float32)      # accumulated into: must start at zero
    return dict(kernel=reduce_sum, griddim=math.ceil(n / THREADS), blockdim=THREADS,
                shared=0, args=[x, total], expected={1: reference(x)},
                inout={1}, rtol=1e-5, atol=0, bytes=x.nbytes)
