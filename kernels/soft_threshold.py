"""Soft thresholding, the shrinkage step of sparse denoising, as a CUDA ufunc made with @vectorize.

soft_threshold(x, t) = sign(x) * max(|x| - t, 0): coefficients smaller than t become zero, the others move
t towards zero. ``@vectorize([...], target="cuda")`` makes it a ufunc: Numba compiles the function for each
listed signature, with one GPU thread per element, and the call broadcasts its arguments as NumPy does
(a scalar threshold would be read by every thread). The loop is chosen by the arrays' exact dtypes.

Call:  ``soft_threshold(x, t)`` or ``soft_threshold(x, t, out=y)``; in example() the launch line
``soft_threshold[1, 1, 0, 0](x, t, y)`` means the latter (a ufunc picks its own grid).
"""
import numpy as np
from numba import vectorize


@vectorize(["float32(float32, float32)", "float64(float64, float64)"], target="cuda")
def soft_threshold(x, t):
    shrunk = abs(x) - t
    if shrunk <= 0:
        return 0
    return shrunk if x > 0 else -shrunk


def reference(x, t):
    """NumPy, in the ufunc's own type (a float32 loop for float32 arrays)."""
    shrunk = np.abs(x) - t
    return np.where(shrunk <= 0, x.dtype.type(0), np.where(x > 0, shrunk, -shrunk)).astype(x.dtype)


# The sizes `numba2cuda verify` sweeps: one element, a block-and-one, a prime.
VERIFY_SIZES = ("small", 1, 257, 97)

# "bench": 2**26 coefficients (memory-bound); 2**16: a size a program calls many times.
BENCH_SIZES = ("bench", 1 << 16)


def example(rng, size="small"):
    """One call: inputs, the output it fills and the expected output.

    size: "small" (1000 float32 coefficients), "bench" (2**26) or an int n; the float64 loop runs for odd n.
    """
    n = {"small": 1000, "bench": 1 << 26}[size] if isinstance(size, str) else int(size)
    dtype = np.float64 if isinstance(size, int) and size % 2 else np.float32
    x = rng.standard_normal(n).astype(dtype)
    t = (0.5 * rng.random(n)).astype(dtype)  # a threshold per coefficient: its local noise level
    y = np.zeros_like(x)
    return dict(kernel=soft_threshold, griddim=1, blockdim=1, shared=0, args=[x, t, y],
                expected={2: reference(x, t)}, bytes=2 * x.nbytes)
