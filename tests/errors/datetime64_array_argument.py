# expect: 8:11: signature: unknown element type 'datetime64' (numba2cuda does not translate datetime64 and timedelta64 values; pass an array of them as its int64 view, a.view(np.int64), and compare the counts)
"""Counts the timestamps after a cutoff: datetime64 is Numba's own type, and the message says so rather than
calling it a library's."""
import numpy as np
from numba import cuda


@cuda.jit("void(datetime64[::1], int64[::1])")
def after(stamps, count):
    i = cuda.grid(1)
    if i < stamps.shape[0]:
        count[0] += 1
