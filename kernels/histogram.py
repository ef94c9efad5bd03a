"""Histogram of int32 values, negatives included, with per-block shared histograms.

Two histograms are built in one pass:

* ``hist``: NBINS bins of ``width`` values starting at ``lo``.  The bin is
  ``(v - lo) // width``.  Python's ``//`` floors toward minus infinity, so a value just
  below ``lo`` gets bin -1 and is skipped; C's truncating division would give bin 0.
* ``wrap_hist``: the value's residue ``v % NBINS``.  Python's ``%`` takes the sign of the
  divisor, so the residue of a negative value is still in ``0 .. NBINS-1``.

Each block first counts into its own histograms in shared memory (fast atomics, little
contention), then adds them into the global ones: one global atomic per bin per block.
The outputs are accumulated into, so they must be zeroed before the launch.

Launch:  ``histogram[blocks, THREADS](x, lo, width, hist, wrap_hist)``
"""
import numpy as np
from numba import cuda, int32

NBINS = 16
THREADS = 128


@cuda.jit("void(int32[::1], int32, int32, int32[::1], int32[::1])")
def histogram(x, lo, width, hist, wrap_hist):
    tid = cuda.threadIdx.x
    local = cuda.shared.array(NBINS, int32)
    local_wrap = cuda.shared.array(NBINS, int32)
    # zero this block's histograms (the block may have fewer or more threads than bins)
    for b in range(tid, NBINS, cuda.blockDim.x):
        local[b] = 0
        local_wrap[b] = 0
    cuda.syncthreads()

    # grid-stride loop: any grid size covers any input length
    stride = cuda.gridDim.x * cuda.blockDim.x
    for i in range(cuda.grid(1), x.shape[0], stride):
        v = x[i]
        b = (v - lo) // width
        if 0 <= b < NBINS:                 # out-of-range values are skipped
            cuda.atomic.add(local, b, 1)
        cuda.atomic.add(local_wrap, v % NBINS, 1)
    cuda.syncthreads()

    # merge into the global histograms
    for b in range(tid, NBINS, cuda.blockDim.x):
        cuda.atomic.add(hist, b, local[b])
        cuda.atomic.add(wrap_hist, b, local_wrap[b])


def reference(x, lo, width):
    """NumPy reference: returns (hist, wrap_hist)."""
    v = x.astype(np.int64)
    b = (v - lo) // width                  # NumPy's // also floors
    hist = np.bincount(b[(b >= 0) & (b < NBINS)], minlength=NBINS).astype(np.int32)
    wrap_hist = np.bincount(v % NBINS, minlength=NBINS).astype(np.int32)
    return hist, wrap_hist


# The sizes `numba2cuda verify` sweeps (block-1, block+1, primes, 1).
VERIFY_SIZES = ("small", 1, THREADS - 1, THREADS + 1, 67, 97)


# The sizes `numba2cuda bench` times: "bench", where device time dominates, and a size a program
# launches many times, where the host cost of a launch is as large as the kernel.
BENCH_SIZES = ("bench", "medium")


def example(rng, size="small"):
    """One run: inputs, launch configuration and the expected outputs.

    size: "small" (700 values), "medium" (2**20, 256 blocks), "bench" (2**26) or an int n (n values, 3 blocks).
    """
    n, blocks = {"small": (700, 3), "medium": (1 << 20, 256), "bench": (1 << 26, 1024)}[size] if isinstance(size, str) else (int(size), 3)
    lo, width = -50, 7                     # bins cover [-50, 62)
    x = rng.integers(-80, 90, size=n, dtype=np.int32)
    hist = np.zeros(NBINS, dtype=np.int32)
    wrap_hist = np.zeros(NBINS, dtype=np.int32)
    h, wh = reference(x, lo, width)
    return dict(kernel=histogram, griddim=blocks, blockdim=THREADS, shared=0,
                args=[x, lo, width, hist, wrap_hist], expected={3: h, 4: wh},
                inout={3, 4}, bytes=x.nbytes)
