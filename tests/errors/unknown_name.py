# expect: 13:34: unknown name 'ALHPA': it is not a parameter, local variable, module constant or import
"""Uses a constant that was never defined (a typo for ALPHA)."""
from numba import cuda

ALPHA = 0.01


@cuda.jit("void(float32[::1], float32[::1])")
def leaky_relu(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        out[i] = v if v > 0 else ALHPA * v
