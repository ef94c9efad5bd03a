# expect: 17:25: call to inner(): 'inner' reads the module's device array 'A', which numba2cuda passes down from the kernel; here 'A' is this function's own variable, which hides it
"""A device function reads the module's device array A; its caller has a parameter named A too, which the
translation would pass in its place (Numba's inner reads the module's A)."""
import numpy as np
from numba import cuda

A = cuda.to_device(np.array([1.0, 2.0, 3.0, 4.0], np.float32))


@cuda.jit(device=True)
def inner(i):
    return A[i]


@cuda.jit(device=True)
def mid(i, A):
    return A[i] * 100 + inner(i)


@cuda.jit("void(float64[::1], float32[::1])")
def k(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = mid(i, x)
