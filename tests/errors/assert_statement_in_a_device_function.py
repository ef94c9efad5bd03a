# expect: 8:5: assert statement in a device function: Numba's exception leaves the kernel that called it too, which a C return from the device function does not
"""A failed assert stops the whole kernel's thread in Numba; a C return would only leave the function."""
from numba import cuda


@cuda.jit(device=True)
def checked(v):
    assert v >= 0
    return v * 2


@cuda.jit("void(float32[::1], float32[::1])")
def double(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = checked(x[i])
