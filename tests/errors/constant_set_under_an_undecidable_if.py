# expect: 16:29: module variable 'TILE': is set under `if sys.platform == "win32"` (line 8), which numba2cuda cannot decide without running the module
"""The tile size depends on the platform the module runs on."""
import sys

import numpy as np
from numba import cuda, float32

if sys.platform == "win32":
    TILE = 8
else:
    TILE = 16


@cuda.jit("void(float32[::1], float32[::1])")
def stage(x, out):
    buf = cuda.shared.array(TILE, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i]
    cuda.syncthreads()
    out[i] = buf[TILE - 1 - t]
