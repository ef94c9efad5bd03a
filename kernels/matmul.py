"""Tiled matrix multiplication with *dynamic* shared memory and a runtime tile width.

This is the kernel from the "Going Further with CUDA for Python Programmers" lecture,
written exactly as the lecture writes it.  The tile width ``tw`` is an ordinary kernel
argument, so the shared memory cannot be sized at compile time: the kernel declares a
zero-length shared array and the launch supplies the size in bytes (the 4th launch
parameter).  The single shared buffer is then sliced into two tiles, one for ``m`` and
one for ``n``.

Launch:  ``matmul_k_numba[blocks, (tw, tw), 0, tw*tw*2*4](m, n, out, tw)``

One change from the lecture: the shared array's dtype is Numba's ``float32`` rather than
``np.float32``.  Both compile identically on the GPU, but Numba's CUDA simulator sizes a
dynamic shared array with ``dtype.itemsize``, which a NumPy scalar *class* does not have
(``TypeError: unsupported operand type(s) for //: 'int' and 'getset_descriptor'``).
"""
import math

import numpy as np
from numba import cuda, float32

# The lecture's kernel has no signature: Numba types it at the first launch (a Python int tw is int64).
# numba2cuda never runs the module, so it reads the same types from here.
NUMBA2CUDA_TYPES = {"matmul_k_numba": "m=float32[:, ::1], n=float32[:, ::1], out=float32[:, ::1], tw=int64"}


@cuda.jit
def matmul_k_numba(m, n, out, tw):
    cbi, cbd, tid = cuda.blockIdx, cuda.blockDim, cuda.threadIdx
    tc, tr = tid.x, tid.y
    # the output element this thread is responsible for
    r, c = cbi.y * cbd.y + tr, cbi.x * cbd.x + tc
    h, k = m.shape
    w = n.shape[1]
    # one dynamic shared buffer (size given at launch), split into the two tiles
    shar = cuda.shared.array(0, dtype=float32)
    ms, ns = shar[:tw*tw], shar[tw*tw:2*tw*tw]
    p = np.float32(0.0)
    # walk along k one tile ("phase") at a time
    for ph in range(math.ceil(k/tw)):
        idx = ph*tw
        # each thread loads one element of each tile, padding with zeros past the edges
        ms[tr*tw+tc] = m[r, tc+idx] if r<h and idx+tc<k else 0.
        ns[tr*tw+tc] = n[tr+idx, c] if c<w and idx+tr<k else 0.
        cuda.syncthreads()  # tiles fully loaded before anyone reads them
        for i in range(tw): p += ms[tr*tw+i] * ns[i*tw+tc]
        cuda.syncthreads()  # everyone done reading before the next phase overwrites them
    if r < h and c < w: out[r, c] = p


def reference(m, n):
    """NumPy reference."""
    return (m.astype(np.float64) @ n.astype(np.float64)).astype(np.float32)


# The sizes `numba2cuda verify` sweeps (n x n matrices); for each tile width it runs it adds tw-1 and
# tw+1, and it runs every specialised tile width (8, 16, 32) plus one the generic kernel handles.
VERIFY_SIZES = ("small", 1, 67, 97)

# The size `numba2cuda bench` times: the lecture's 5120x256 @ 256x5120 (13.4 GFLOP), at every tile width.
BENCH_SIZES = ("bench",)


def example(rng, size="small", tw=None):
    """One run: inputs, launch configuration and the expected outputs.

    size: "small" (23x19 @ 19x21), "bench" (5120x256 @ 256x5120) or an int n (n x n @ n x n);
    tw: the tile width (default 8, or 16 for "bench"); the block is (tw, tw).
    """
    if size == "small":
        h, k, w, dflt = 23, 19, 21, 8        # nothing is a multiple of the tile
    elif size == "bench":
        h, k, w, dflt = 5120, 256, 5120, 16
    else:
        h = k = w = int(size)
        dflt = 8
    tw = dflt if tw is None else int(tw)
    m = rng.standard_normal((h, k)).astype(np.float32)
    n = rng.standard_normal((k, w)).astype(np.float32)
    out = np.zeros((h, w), dtype=np.float32)
    blocks = (math.ceil(w / tw), math.ceil(h / tw))   # x covers columns, y covers rows
    return dict(kernel=matmul_k_numba, griddim=blocks, blockdim=(tw, tw),
                shared=tw * tw * 2 * 4,
                args=[m, n, out, tw], expected={2: reference(m, n)},
                rtol=1e-4, atol=1e-4, flops=2 * h * k * w, bytes=m.nbytes + n.nbytes + out.nbytes,
                references={"cuBLAS fp32": cublas(tf32=False), "cuBLAS TF32": cublas(tf32=True)})


def cublas(tf32):
    """A reference `numba2cuda bench` times beside the kernel: torch.matmul (cuBLAS) into out, in fp32 or
    TF32. It takes the kernel's arguments as torch CUDA tensors; torch is imported only when it runs."""
    def run(m, n, out, tw):
        import torch

        before = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32
        try:
            torch.matmul(m, n, out=out)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = before
    return run
