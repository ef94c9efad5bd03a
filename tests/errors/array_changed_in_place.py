# expect: 18:19: module variable 'WEIGHTS': is a NumPy array changed in place (line 11)
"""The weights are normalised in place after they are made: the kernel would see the normalised values."""
import numpy as np
from numba import cuda

WEIGHTS = np.array([1.0, 2.0, 1.0], dtype=np.float32)


def normalise():
    total = WEIGHTS.sum()
    WEIGHTS[:] = WEIGHTS / total


@cuda.jit("void(float32[::1], float32[::1])")
def smooth(x, out):
    i = cuda.grid(1)
    if 0 < i < x.shape[0] - 1:
        out[i] = (WEIGHTS[0] * x[i - 1] + WEIGHTS[1] * x[i]
                  + WEIGHTS[2] * x[i + 1])
