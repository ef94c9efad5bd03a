# expect: 9:12: string: strings exist only as print() arguments, and as a local's values only compared with == or != (a tag of up to 8 bytes)
"""Builds a string from a flag: Numba needs its runtime (NRT) to concatenate, which CUDA kernels do not have."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def activate(x, out):
    i = cuda.grid(1)
    mode = "relu"
    if i < x.shape[0]:
        if mode + "6" == "relu6":
            out[i] = min(max(x[i], 0.0), 6.0)
