"""Where NumPy 2 and the CUDA simulator compute something else than Numba on the GPU: a Python float times a
float32 (float64 in Numba, float32 under NEP 50), int8 + int8 (int64 in Numba, wrapping int8 in the
simulator), math.exp of a float32 (float32 in Numba, a Python float in the simulator) and a float32
compared with a float literal (in float64 in Numba). verify's reference must compute Numba's values."""
import math

import numpy as np
from numba import cuda


@cuda.jit("void(float32[::1], int8[::1], int8[::1], int32[::1], float32[::1], float64[::1])")
def promote(x, a, b, iout, fout, dout):
    i = cuda.grid(1)
    if i < x.shape[0]:
        dout[i] = 0.1 * x[i]
        iout[i] = (a[i] + b[i]) // 3
        fout[i] = math.exp(x[i]) * 3.0
        if x[i] > 0.1:
            iout[i] += 1000


def example(rng, size="small"):
    n = 300
    x = rng.standard_normal(n).astype(np.float32)
    x[:5] = np.float32(0.1)
    a = rng.integers(-128, 128, n).astype(np.int8)
    b = rng.integers(-128, 128, n).astype(np.int8)
    return dict(kernel=promote, griddim=3, blockdim=128, shared=0,
                args=[x, a, b, np.zeros(n, np.int32), np.zeros(n, np.float32), np.zeros(n)],
                expected={3: None, 4: None, 5: None})
