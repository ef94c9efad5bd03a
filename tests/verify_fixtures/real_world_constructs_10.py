"""Constructs the twenty-seventh and twenty-eighth collections of public kernels found missing: a conditional
expression of two tuples unpacked at once (a wealth-exchange model's lock order, in a device function and in the
kernel, a swap among them), a device decorator the module binds under `if cuda.is_available():` (a ray tracer's,
`jit(inline='always')` on the CPU otherwise), and a dtype's itemsize as a constant (a dataframe library's mask
bits)."""
import math

import numpy as np
from numba import cuda, jit

if cuda.is_available():
    device_decorator = cuda.jit(device=True)
else:
    device_decorator = jit(inline="always")

mask_dtype = np.dtype(np.uint8)
mask_bitsize = mask_dtype.itemsize * 8


@device_decorator
def ordered(i, j):
    first, second = (i, j) if i < j else (j, i)
    return first, second


@cuda.jit("void(int64[::1], int64[::1], int64[:, ::1])")
def lock_order(a, b, out):
    k = cuda.grid(1)
    if k < a.shape[0]:
        lo, hi = ordered(a[k], b[k])
        x, y = a[k], b[k]
        x, y = (y, x) if x % 3 == 0 else (x + 1, y - 1)
        out[k, 0] = lo
        out[k, 1] = hi
        out[k, 2] = x * 10 + y
        out[k, 3] = (a[k] >> (k % mask_bitsize)) & 1


def example_lock_order(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    a, b = rng.integers(-50, 50, n), rng.integers(-50, 50, n)
    swapped = a % 3 == 0
    x, y = np.where(swapped, b, a + 1), np.where(swapped, a, b - 1)
    expected = np.stack([np.minimum(a, b), np.maximum(a, b), x * 10 + y, (a >> (np.arange(n) % 8)) & 1], axis=1)
    return dict(kernel=lock_order, griddim=math.ceil(n / 32), blockdim=32, args=[a, b, np.zeros((n, 4), np.int64)],
                expected={2: expected})
