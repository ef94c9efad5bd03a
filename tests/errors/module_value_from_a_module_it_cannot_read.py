# expect: 10:22: 'config.THRESHOLD': it comes from .config, which numba2cuda did not read: it is not next to this file
"""Reads a setting of a sibling module brought in with `from . import config` (the file is not there to read)."""
from numba import cuda

from . import config


@cuda.jit("void(float64[::1])")
def clamp(a):
    a[0] = max(a[0], config.THRESHOLD)
