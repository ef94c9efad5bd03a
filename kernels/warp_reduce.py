"""Sum of a vector with warp shuffles: no shared memory at all.

The 32 threads of a warp can read each other's registers.  ``cuda.shfl_down_sync(mask,
v, offset)`` returns ``v`` from the lane ``offset`` places higher, so after adding it with
offsets 16, 8, 4, 2, 1 lane 0 holds the sum of the whole warp.  Lane 0 then adds that
into the one-element output, which must be zeroed before the launch.

The block size must be a multiple of 32 so every warp is full (threads past the end of
the input contribute 0 but still take part in the shuffles).

Launch:  ``warp_reduce[math.ceil(n / THREADS), THREADS](x, total)``
"""
import math

import numpy as np
from numba import cuda, int32

THREADS = 128                      # a multiple of the warp size, 32
FULL_MASK = 0xffffffff             # every lane of the warp takes part


@cuda.jit("void(int32[::1], int32[::1])")
def warp_reduce(x, total):
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    v = x[i] if i < x.shape[0] else int32(0)
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, offset)
        offset //= 2
    if lane == 0:
        cuda.atomic.add(total, 0, v)


def reference(x):
    """NumPy reference."""
    return np.array([x.astype(np.int64).sum()], dtype=np.int32)


# The sizes `numba2cuda verify` sweeps (block-1, block+1, primes, 1).
VERIFY_SIZES = ("small", 1, THREADS - 1, THREADS + 1, 67, 97)


# The sizes `numba2cuda bench` times: "bench", where device time dominates, and a size a program
# launches many times, where the host cost of a launch is as large as the kernel.
BENCH_SIZES = ("bench", 1 << 20)


def example(rng, size="small"):
    """One run: inputs, launch configuration and the expected outputs.

    size: "small" (1000 values), "bench" (2**26) or an int n.
    """
    n = {"small": 1000, "bench": 1 << 26}[size] if isinstance(size, str) else int(size)
    x = rng.integers(-100, 101, size=n, dtype=np.int32)
    total = np.zeros(1, dtype=np.int32)        # accumulated into: must start at zero
    return dict(kernel=warp_reduce, griddim=math.ceil(n / THREADS), blockdim=THREADS,
                shared=0, args=[x, total], expected={1: reference(x)}, inout={1},
                bytes=x.nbytes)
