"""Constructs the thirty-fifth and later collections of public kernels found translated with C's or Python's
types where numba-cuda's differ. A convolution's `s += mask[k, l] * image[i, j]` (float32 by uint8): numba-cuda
picks the float32 multiply, since a uint8 converts to float32 safely (uint16 would not); a parser's uint64
offsets compared with int64 extents: no integer type holds both, so Numba compares them as float64; and its math
functions by their declared signatures: math.floor of a float32 is a float32 (not Python's int), math.fmod of a
float32 and an int8 a float32, math.pow of two int8 a float32."""
import math

import numpy as np
from numba import cuda


@cuda.jit("void(float32[:, ::1], uint8[:, ::1], float64[:, ::1])")
def convolve(mask, image, out):
    i, j = cuda.grid(2)
    rows, cols = out.shape
    if i < rows and j < cols:
        s = 0.0
        for k in range(mask.shape[0]):
            for m in range(mask.shape[1]):
                s += mask[k, m] * image[i + k, j + m]
        out[i, j] = s


def example_convolve(rng, size="small"):
    n = {"small": 12}.get(size, size) if isinstance(size, str) else int(size)
    mask = rng.random((3, 3)).astype(np.float32)
    image = rng.integers(0, 256, (n + 2, n + 2)).astype(np.uint8)
    expected = np.zeros((n, n))
    for k in range(3):
        for m in range(3):
            expected += (mask[k, m] * image[k:k + n, m:m + n].astype(np.float32)).astype(np.float64)
    return dict(kernel=convolve, griddim=(math.ceil(n / 8), math.ceil(n / 8)), blockdim=(8, 8),
                args=[mask, image, np.zeros((n, n))], expected={2: expected})


@cuda.jit("void(uint64[::1], int64[::1], int64[::1])")
def offsets(starts, extents, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        flags = 0
        if starts[i] >= extents[i]:
            flags += 1
        if starts[i] == extents[i]:
            flags += 2
        if starts[i] >= 5:
            flags += 4
        out[i] = flags


def example_offsets(rng, size="small"):
    starts = np.array([2**63 + 5, 2**53 + 1, 5, 0, 2**64 - 1, 7, 3, 9], dtype=np.uint64)
    extents = np.array([5, 2**53, 5, -1, -1, 8, 3, 2], dtype=np.int64)
    s, e = starts.astype(np.float64), extents.astype(np.float64)
    expected = (s >= e) * 1 + (s == e) * 2 + (s >= 5) * 4
    return dict(kernel=offsets, griddim=1, blockdim=32, args=[starts, extents, np.zeros(8, np.int64)],
                expected={2: expected})


@cuda.jit("void(float32[::1], int8[::1], float32[::1], float64[::1])")
def math_types(x, b, out, out64):
    i = cuda.grid(1)
    if i < x.shape[0]:
        f = math.floor(x[i])
        out[i] = f * x[i] + math.fmod(x[i], b[i]) + math.pow(b[i], b[i] % 3)
        out64[i] = math.ceil(x[i]) / 3 + math.sqrt(b[i] * b[i])


def example_math_types(rng, size="small"):
    n = {"small": 64}.get(size, size) if isinstance(size, str) else int(size)
    x = (rng.standard_normal(n) * 50).astype(np.float32)
    b = rng.integers(1, 100, n).astype(np.int8)
    bf = b.astype(np.float32)
    out = np.floor(x) * x + np.fmod(x, bf) + np.power(bf, (b % 3).astype(np.float32))
    out64 = np.ceil(x).astype(np.float64) / 3 + np.sqrt((b.astype(np.int64) ** 2).astype(np.float64))
    return dict(kernel=math_types, griddim=math.ceil(n / 32), blockdim=32,
                args=[x, b, np.zeros(n, np.float32), np.zeros(n)], expected={2: out, 3: out64})
