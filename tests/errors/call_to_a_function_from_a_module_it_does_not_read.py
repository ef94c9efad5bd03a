# expect: 11:14: call to smooth(): it comes from .filters, which numba2cuda does not read: it translates the device functions of this file and of the modules next to it (in its folder or package) that it imports
"""Calls a device function imported from a sibling module that is not there to read."""
from numba import cuda

from .filters import smooth


@cuda.jit("void(float32[::1], float32[::1])")
def apply(out, x):
    i = cuda.grid(1)
    out[i] = smooth(x, i)
