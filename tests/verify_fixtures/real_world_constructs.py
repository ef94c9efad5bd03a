"""Constructs of kernels collected from public projects (issue 17), each verified against the Numba original:
a stencil window passed to a device function and windows bound to names, tuples iterated and indexed at run
time, arrays unpacked into names, a slice clipped at the array's end, and a tuple reassigned in branches."""
import math

import numpy as np
from numba import cuda, int32

OFFSETS = (2, -1, 3)


@cuda.jit(device=True)
def slope(w, cx):
    return (w[2, 2] + 2 * w[1, 0] + w[0, 2] - w[2, 0] - w[0, 0]) / cx + w.shape[1]


@cuda.jit("void(float64[:, ::1], float64, float64[:, ::1])")
def stencil(arr, cx, out):
    i, j = cuda.grid(2)
    if i >= 1 and i + 1 < out.shape[0] and j >= 1 and j + 1 < out.shape[1]:
        out[i, j] = slope(arr[i - 1:i + 2, j - 1:j + 2], cx)


@cuda.jit("void(float32[:, ::1], float32[:, ::1])")
def block_sum(p, out):
    i, j = cuda.grid(2)
    if 1 <= i < p.shape[0] - 1 and 1 <= j < p.shape[1] - 1:
        src = p[i - 1:i + 2, j - 1:j + 2]
        s = 0.0
        for ii in range(src.shape[0]):
            for jj in range(src.shape[1]):
                s += src[ii, jj] * (ii + 1)
        row = src[1]
        out[i, j] = s + row[2] - src[2][0]


@cuda.jit("void(int64[::1], UniTuple(int64, 3), int64[::1])")
def tuples(x, t, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        s = 0
        for off in (16, 8, 4):
            s += x[i] // off
        for d in OFFSETS:
            s = s * 3 + d
        for v in t:
            s += v * x[i]
        k = abs(x[i]) % 3
        out[i] = s + OFFSETS[k] + t[-1 - k] * 100


@cuda.jit(device=True)
def total(v):
    s = 0.0
    for k in range(v.shape[0]):
        s += v[k]
    return s


@cuda.jit("void(float64[:, ::1], float64[::1])")
def unpack_and_clip(st, out):
    i = cuda.grid(1)
    if i < st.shape[0]:
        x, y, z = st[i]
        pos = (i, 0)
        if x > 0:
            pos = (i, 1)
        elif y > 0:
            pos = (i, int32(2))
        out[i] = x * 100 + y * 10 + z + total(st[i, 1:5]) + st[pos] + len(st[i, 1:5])


def _grid2(shape, block=(8, 8)):
    return (math.ceil(shape[0] / block[0]), math.ceil(shape[1] / block[1])), block


def example_stencil(rng, size="small"):
    n = {"small": 20}.get(size, size) if isinstance(size, str) else int(size)
    arr = rng.standard_normal((n, n + 3))
    out = np.zeros_like(arr)
    expected = np.zeros_like(arr)
    for i in range(1, n - 1):
        for j in range(1, n + 2):
            w = arr[i - 1:i + 2, j - 1:j + 2]
            expected[i, j] = (w[2, 2] + 2 * w[1, 0] + w[0, 2] - w[2, 0] - w[0, 0]) / 2.0 + 3
    griddim, blockdim = _grid2(arr.shape)
    return dict(kernel=stencil, griddim=griddim, blockdim=blockdim, args=[arr, 2.0, out], expected={2: expected})


def example_block_sum(rng, size="small"):
    n = {"small": 17}.get(size, size) if isinstance(size, str) else int(size)
    p = rng.standard_normal((n, n + 2)).astype(np.float32)
    out = np.zeros_like(p)
    expected = np.zeros_like(p)
    for i in range(1, n - 1):
        for j in range(1, n + 1):
            w = p[i - 1:i + 2, j - 1:j + 2].astype(np.float64)
            expected[i, j] = (w * np.arange(1, 4)[:, None]).sum() + w[1, 2] - w[2, 0]
    griddim, blockdim = _grid2(p.shape)
    return dict(kernel=block_sum, griddim=griddim, blockdim=blockdim, args=[p, out], expected={1: expected},
                rtol=1e-6)


def example_tuples(rng, size="small"):
    n = {"small": 100}.get(size, size) if isinstance(size, str) else int(size)
    x = rng.integers(-1000, 1000, n).astype(np.int64)
    t = (5, -7, 11)
    expected = np.zeros_like(x)
    for i, xi in enumerate(x.tolist()):
        s = sum(xi // off for off in (16, 8, 4))
        for d in OFFSETS:
            s = s * 3 + d
        s += sum(v * xi for v in t)
        k = abs(xi) % 3
        expected[i] = s + OFFSETS[k] + t[-1 - k] * 100
    return dict(kernel=tuples, griddim=math.ceil(n / 64), blockdim=64, args=[x, t, np.zeros_like(x)],
                expected={2: expected})


def example_unpack_and_clip(rng, size="small"):
    n = {"small": 50}.get(size, size) if isinstance(size, str) else int(size)
    st = rng.standard_normal((n, 3))
    expected = np.zeros(n)
    for i, (x, y, z) in enumerate(st):
        pos = (i, 1) if x > 0 else (i, 2) if y > 0 else (i, 0)
        expected[i] = x * 100 + y * 10 + z + st[i, 1:5].sum() + st[pos] + len(st[i, 1:5])
    return dict(kernel=unpack_and_clip, griddim=math.ceil(n / 32), blockdim=32, args=[st, np.zeros(n)],
                expected={1: expected}, rtol=1e-12)
