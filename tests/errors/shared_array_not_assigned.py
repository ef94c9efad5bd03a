# expect: 13:10: cuda.shared.array(): must be assigned to a name on its own line
"""Passes a fresh shared array straight to a device function."""
from numba import cuda, float32


@cuda.jit("void(float32[::1], float32[::1])", device=True)
def fill(buf, x):
    buf[cuda.threadIdx.x] = x[cuda.grid(1)]


@cuda.jit("void(float32[::1])")
def load(x):
    fill(cuda.shared.array(128, float32), x)
