# expect: 19:14: module variable 'SCALE': is set under a try statement (line 5), which numba2cuda cannot decide without running the module
"""A module constant whose value depends on whether an optional package imports (only running decides)."""
from numba import cuda

try:
    import scipy  # noqa: F401
    SCALE = 2.0
except ImportError:
    SCALE = 1.0

try:
    from math import nan  # the standard library always has it: no branch to decide
except ImportError:
    nan = float("nan")


@cuda.jit("void(float64[::1])")
def fill(out):
    out[0] = SCALE + nan
