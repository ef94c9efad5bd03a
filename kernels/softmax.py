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

# The sizes `numba2cuda bench` times: rows x columns.
BENCH_SIZES = ("4096x4096", "8192x8192")


def shape(size):
    """(rows, cols) of a size: "small" (2 x 300), "bench" (4096 x 4096), "RxC", or an int n (2 rows of n)."""
    if isinstance(size, str):
        named = {"small": (2, 300), "bench": (4096, 4096)}
        if size in named:
            return named[size]
        rows, cols = size.lower().split("x")
        return int(rows), int(cols)
    return 2, int(size)


def example(rng, size="small"):
    """One run: inputs, launch configuration and the expected outputs.

    size: "small" (2 x 300), "bench" (4096 x 4096), "RxC" (e.g. "8192x8192") or an int n (2 rows of n columns).
    """
    rows, cols = shape(size)
    x = (4 * rng.standard_normal((rows, cols))).astype(np.float32)
    out = np.zeros_like(x)
    return dict(kernel=softmax, griddim=rows, blockdim=THREADS, shared=0,
                args=[x, out], expected={1: reference(x)}, rtol=1e-5, atol=1e-7,
                bytes=x.nbytes + out.nbytes,
                references={"torch.softmax": torch_softmax, "Triton": triton_softmax})


def torch_softmax(x, out):
    """A reference `numba2cuda bench` times beside the kernel (torch CUDA tensors; torch imported when it runs)."""
    import torch

    torch.softmax(x, 1, out=out)


_TRITON_KERNELS = {}


def triton_softmax(x, out):
    """A reference `numba2cuda bench` times: Triton's fused softmax (one program per row, the row held in
    registers), as in Triton's tutorial. Triton is imported only when it runs, so neither the translator
    nor the CPU tests need it; `global` so the Triton kernel finds `tl` among its module's globals."""
    global triton, tl
    import triton
    import triton.language as tl

    kernel = _TRITON_KERNELS.get("softmax")
    if kernel is None:
        @triton.jit
        def softmax_rows(out_ptr, in_ptr, in_stride, out_stride, ncols, BLOCK: tl.constexpr):
            row = tl.program_id(0)
            cols = tl.arange(0, BLOCK)
            mask = cols < ncols
            v = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
            v = v - tl.max(v, axis=0)
            num = tl.exp(v)
            tl.store(out_ptr + row * out_stride + cols, num / tl.sum(num, axis=0), mask=mask)

        kernel = _TRITON_KERNELS["softmax"] = softmax_rows
    block = triton.next_power_of_2(x.shape[1])
    warps = 4 if block < 2048 else 8 if block < 4096 else 16
    kernel[(x.shape[0],)](out, x, x.stride(0), out.stride(0), x.shape[1], BLOCK=block, num_warps=warps)
