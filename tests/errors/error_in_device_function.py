# expect: 9:9: raise statement in a device function: Numba's exception leaves the kernel that called it too, which a C return from the device function does not
"""The mistake is inside a device function the kernel calls."""
from numba import cuda


@cuda.jit("float32(float32)", device=True)
def checked_inverse(v):
    if v == 0:
        raise ZeroDivisionError("v is zero")
    return 1 / v


@cuda.jit("void(float32[::1], float32[::1])")
def inverse(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = checked_inverse(x[i])
