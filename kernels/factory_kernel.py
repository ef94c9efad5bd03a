"""A moving-average (box) filter whose kernel is made by a factory.

``make_box_filter(radius, threads)`` builds a kernel specialised to one filter radius and one block size:
the kernel never receives them as arguments, it closes over them, and Numba reads them as constants when
it compiles the kernel (so the shared-memory tile can be sized by them). Each output element is the mean of
the ``2 * radius + 1`` inputs centred on it; past either end the edge element is repeated.

Each block first copies the inputs it needs, its own ``threads`` elements plus ``radius`` on either side,
into shared memory (every thread copies a few, striding by the block size), waits for the whole block, then
sums its window from shared memory. The sum is float32, as written; ``weight`` is a Python float, so the
final product is float64 in Numba before it is stored as float32.

Launch (the block size must be the factory's ``threads``):
``box_filter_r3[math.ceil(n / 128), 128](x, out)``
"""
import math

import numpy as np
from numba import cuda, float32


def make_box_filter(radius, threads):
    """A kernel averaging each element with its RADIUS neighbours on each side, for blocks of THREADS threads."""
    width = 2 * radius + 1
    weight = 1.0 / width
    halo = threads + 2 * radius  # the shared tile: the block's elements and the radius on both sides

    @cuda.jit("void(float32[::1], float32[::1])")
    def box_filter(x, out):
        tile = cuda.shared.array(halo, float32)
        n = x.shape[0]
        t = cuda.threadIdx.x
        first = cuda.blockIdx.x * threads - radius  # the input element tile[0] holds
        for k in range(t, halo, threads):
            tile[k] = x[min(max(first + k, 0), n - 1)]
        cuda.syncthreads()
        i = cuda.blockIdx.x * threads + t
        if i < n:
            total = float32(0.0)
            for k in range(width):
                total += tile[t + k]
            out[i] = total * weight

    return box_filter


RADIUS = 3
THREADS = 128
box_filter_r3 = make_box_filter(RADIUS, THREADS)


def reference(x, radius):
    """NumPy reference: the same float32 sums in the same order, scaled in float64."""
    padded = np.concatenate([np.repeat(x[:1], radius), x, np.repeat(x[-1:], radius)])
    total = np.zeros_like(x)
    for k in range(2 * radius + 1):
        total = (total + padded[k:k + x.shape[0]]).astype(np.float32)
    return (total.astype(np.float64) * (1.0 / (2 * radius + 1))).astype(np.float32)


# The sizes `numba2cuda verify` sweeps: n elements (block-1, block+1, primes, 1).
VERIFY_SIZES = ("small", 1, THREADS - 1, THREADS + 1, 67, 97)


# The sizes `numba2cuda bench` times: "bench", where device time dominates, and a size a program
# launches many times, where the host cost of a launch is as large as the kernel.
BENCH_SIZES = ("bench", 1 << 20)


def example(rng, size="small"):
    """One run: inputs, launch configuration and the expected outputs.

    size: "small" (1000 elements), "bench" (2**25) or an int n (n elements).
    """
    n = {"small": 1000, "bench": 1 << 25}[size] if isinstance(size, str) else int(size)
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, dtype=np.float32)
    return dict(kernel=box_filter_r3, griddim=math.ceil(n / THREADS), blockdim=THREADS, shared=0,
                args=[x, out], expected={1: reference(x, RADIUS)}, rtol=1e-6, atol=1e-6,
                bytes=x.nbytes + out.nbytes)
