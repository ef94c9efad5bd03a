# expect: 15:18: call to 'lerp': takes 3 argument(s), got 2
"""Calls a device function with one argument too few."""
from numba import cuda


@cuda.jit("float32(float32, float32, float32)", device=True)
def lerp(a, b, t):
    return a + (b - a) * t


@cuda.jit("void(float32[::1], float32[::1], float32[::1])")
def blend(a, b, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = lerp(a[i], b[i])
