# expect: 12:12: 'ACTIVATION': string
"""Chooses the activation with a module-level string setting."""
from numba import cuda

ACTIVATION = "relu"


@cuda.jit("void(float32[::1], float32[::1])")
def activate(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        if ACTIVATION == "relu":
            out[i] = max(x[i], 0.0)
        else:
            out[i] = x[i]
