"""RGB to greyscale, as in the "Getting started with CUDA for Python Programmers" lecture.

The image is a (3, h, w) uint8 array: the red, green and blue planes one after the other
(the layout torchvision's ``read_image`` gives).  Each thread converts one pixel with the
lecture's luma weights.  The weighted sum is a float64; storing it into the uint8 output
truncates toward zero, exactly like ``.astype(np.uint8)`` in NumPy.

Truncation makes the result sensitive to the last bit of the sum: on a GPU the compiler
fuses multiply-adds (FMA), so a sum that NumPy computes as 62.99999999999999 can come out
as 63.0 (or the reverse) and the grey value differs by one.  On an H200 this happened for
214 of 16.7 million random pixels; the simulator, being NumPy, matches exactly.

Launch:  ``rgb_to_grey[(ceil(w/16), ceil(h/16)), (16, 16)](img, out)``
"""
import math

import numpy as np
from numba import cuda


@cuda.jit("void(uint8[:, :, ::1], uint8[:, ::1])")
def rgb_to_grey(img, out):
    c, r = cuda.grid(2)            # column, row of this thread's pixel
    h, w = out.shape
    if r < h and c < w:
        out[r, c] = 0.2989*img[0, r, c] + 0.5870*img[1, r, c] + 0.1140*img[2, r, c]


def reference(img):
    """NumPy reference."""
    x = img.astype(np.float64)
    return (0.2989*x[0] + 0.5870*x[1] + 0.1140*x[2]).astype(np.uint8)


# The sizes `numba2cuda verify` sweeps (block-1, block+1, a prime, 1).
VERIFY_SIZES = ("small", 1, 15, 17, 67)


# The sizes `numba2cuda bench` times: "bench", where device time dominates, and a size a program
# launches many times, where the host cost of a launch is as large as the kernel.
BENCH_SIZES = ("bench", 1024)


def example(rng, size="small"):
    """One run: inputs, launch configuration and the expected outputs.

    size: "small" (17 x 23), "bench" (4096 x 4096) or an int n (n x (n+2)).
    """
    h, w = {"small": (17, 23), "bench": (4096, 4096)}[size] if isinstance(size, str) else (int(size), int(size) + 2)
    img = rng.integers(0, 256, size=(3, h, w), dtype=np.uint8)
    out = np.zeros((h, w), dtype=np.uint8)
    block = (16, 16)
    grid = (math.ceil(w / block[0]), math.ceil(h / block[1]))
    # exact in the simulator; off by one allowed at benchmark size, where FMA
    # contraction on the GPU flips a few truncations (see the module docstring)
    return dict(kernel=rgb_to_grey, griddim=grid, blockdim=block, shared=0,
                args=[img, out], expected={1: reference(img)},
                atol=1 if size == "bench" else 0, bytes=img.nbytes + out.nbytes)
