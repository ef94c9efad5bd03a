"""The lecture's matmul exactly as written: cuda.shared.array(0, dtype=np.float32) (a NumPy scalar class, which
the simulator cannot size) and a runtime tile width."""
import math

import numpy as np
from numba import cuda

NUMBA2CUDA_TYPES = {"matmul_k_numba": "m=float32[:, ::1], n=float32[:, ::1], out=float32[:, ::1], tw=int64"}


@cuda.jit
def matmul_k_numba(m, n, out, tw):
    cbi, cbd, tid = cuda.blockIdx, cuda.blockDim, cuda.threadIdx
    tc, tr = tid.x, tid.y
    r, c = cbi.y * cbd.y + tr, cbi.x * cbd.x + tc
    h, k = m.shape
    w = n.shape[1]
    shar = cuda.shared.array(0, dtype=np.float32)
    ms, ns = shar[:tw*tw], shar[tw*tw:2*tw*tw]
    p = np.float32(0.0)
    for ph in range(math.ceil(k/tw)):
        idx = ph*tw
        ms[tr*tw+tc] = m[r, tc+idx] if r<h and idx+tc<k else 0.
        ns[tr*tw+tc] = n[tr+idx, c] if c<w and idx+tr<k else 0.
        cuda.syncthreads()
        for i in range(tw): p += ms[tr*tw+i] * ns[i*tw+tc]
        cuda.syncthreads()
    if r < h and c < w: out[r, c] = p


def example(rng, size="small", tw=None):
    tw = tw or 8
    h, k, w = 13, 11, 9
    m = rng.standard_normal((h, k)).astype(np.float32)
    n = rng.standard_normal((k, w)).astype(np.float32)
    return dict(kernel=matmul_k_numba, griddim=(math.ceil(w / tw), math.ceil(h / tw)), blockdim=(tw, tw),
                shared=tw * tw * 2 * 4, args=[m, n, np.zeros((h, w), np.float32), tw],
                expected={2: (m.astype(np.float64) @ n).astype(np.float32)}, rtol=1e-4, atol=1e-4)
