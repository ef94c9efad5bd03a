# expect: 14:18: module-level array 'LUT': is 131072 bytes; constant memory holds 64 KiB
"""A lookup table computed at import, too large to bake into the kernel."""
import numpy as np
from numba import cuda

LUT = np.sqrt(np.arange(1 << 15, dtype=np.float32))


@cuda.jit("void(int32[::1], float32[::1])")
def lookup(idx, out):
    i = cuda.grid(1)
    if i < idx.shape[0]:
        j = idx[i]
        out[i] = LUT[j]
