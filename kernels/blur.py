"""2-D box blur: each output pixel is the mean of its (2*RADIUS+1)^2 neighbourhood.

A stencil: every thread loops over the neighbours of its own pixel.  Neighbours that fall
outside the image are left out of both the sum and the count, so the edges are averaged
over fewer pixels instead of being darkened by zero padding.  The bounds checks use
Python's chained comparisons, ``0 <= yy < h``.

Launch:  ``box_blur[(ceil(w/16), ceil(h/16)), (16, 16)](img, out)``
"""
import math

import numpy as np
from numba import cuda, float32

RADIUS = 2


@cuda.jit("void(float32[:, ::1], float32[:, ::1])")
def box_blur(img, out):
    x, y = cuda.grid(2)
    h, w = img.shape
    if 0 <= y < h and 0 <= x < w:
        acc = float32(0.0)
        count = 0
        for dy in range(-RADIUS, RADIUS + 1):
            for dx in range(-RADIUS, RADIUS + 1):
                yy = y + dy
                xx = x + dx
                if 0 <= yy < h and 0 <= xx < w:
                    acc += img[yy, xx]
                    count += 1
        out[y, x] = acc / float32(count)


def reference(img):
    """NumPy reference."""
    h, w = img.shape
    r = RADIUS
    padded = np.zeros((h + 2 * r, w + 2 * r), dtype=np.float64)
    inside = np.zeros_like(padded)
    padded[r:r + h, r:r + w] = img
    inside[r:r + h, r:r + w] = 1.0
    total = np.zeros((h, w))
    count = np.zeros((h, w))
    for dy in range(2 * r + 1):
        for dx in range(2 * r + 1):
            total += padded[dy:dy + h, dx:dx + w]
            count += inside[dy:dy + h, dx:dx + w]
    return (total / count).astype(np.float32)


# The sizes `numba2cuda verify` sweeps (block-1, block+1, a prime, 1).
VERIFY_SIZES = ("small", 1, 15, 17, 67)


# The sizes `numba2cuda bench` times: "bench", where device time dominates, and a size a program
# launches many times, where the host cost of a launch is as large as the kernel.
BENCH_SIZES = ("bench", 1024)


def example(rng, size="small"):
    """One run: inputs, launch configuration and the expected outputs.

    size: "small" (20 x 27), "bench" (4096 x 4096) or an int n (n x (n+2)).
    """
    h, w = {"small": (20, 27), "bench": (4096, 4096)}[size] if isinstance(size, str) else (int(size), int(size) + 2)
    img = rng.random((h, w), dtype=np.float32)
    out = np.zeros((h, w), dtype=np.float32)
    block = (16, 16)
    grid = (math.ceil(w / block[0]), math.ceil(h / block[1]))
    return dict(kernel=box_blur, griddim=grid, blockdim=block, shared=0,
                args=[img, out], expected={1: reference(img)}, rtol=1e-5, atol=1e-6,
                bytes=img.nbytes + out.nbytes)
