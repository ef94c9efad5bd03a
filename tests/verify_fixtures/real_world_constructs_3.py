"""Constructs of a fifth collection of public kernels (issue 17), each verified against the Numba original: a loop
that unpacks each item of a tuple of pairs (a lattice Monte Carlo's neighbours) and `...` written for `pass`; a
loop counter rebound in its body (an image filter's `i += y_offset`); device functions that return the arrays
they were given, one or two, and a local array rebound to what they return (an MRI simulator); an expression
statement without effect (a slip for `=`), which Numba compiles to nothing."""
import math

import numpy as np
from numba import cuda, float64

NEIGHBOURS = ((0, 1), (0, -1), (1, 0), (-1, 0))


@cuda.jit("void(float64[:, ::1], float64[:, ::1])")
def neighbours(grid, out):
    x, y = cuda.grid(2)
    n, m = grid.shape
    if x < n and y < m:
        total = 0.0
        for dx, dy in NEIGHBOURS:
            total += grid[(x + dx) % n, (y + dy) % m]
        for a, b in ((2.0, 3), (-1.0, 4)):
            total += a * b
        if total > 1e300:
            ...
        else:
            out[x, y] = total


@cuda.jit("void(float64[::1], float64[::1], int64)")
def shifted(x, out, offset):
    k = cuda.grid(1)
    if k < out.shape[0] // 4:
        for i in range(4):
            i += offset + 4 * k
            if i < out.shape[0]:
                out[i] = x[i] * i


@cuda.jit(device=True)
def scaled(a, s):
    for i in range(3):
        a[i] = a[i] * s
    return a


@cuda.jit(device=True)
def precess(afp, bfp, t):
    for i in range(3):
        afp[i] = t * i
        bfp[i] = 1.0 - t
    return afp, bfp


@cuda.jit("void(float64[:, ::1], float64[::1], float64)")
def bloch(out, m0, pd):
    k = cuda.grid(1)
    if k < out.shape[0]:
        m = cuda.local.array(3, float64)
        afp = cuda.local.array(3, float64)
        bfp = cuda.local.array(3, float64)
        for i in range(3):
            m[i] = m0[k] + i
        for step in range(3):
            m = scaled(m, pd)
            afp, bfp = precess(afp, bfp, 0.5 * step + m0[k])
        pair = precess(afp, bfp, m0[k] * 0.25)
        for i in range(3):
            out[k, i] = m[i] + pair[0][i] * pair[1][i] + bfp[i]


@cuda.jit("void(float64[::1], float64[::1])")
def slip(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] == x[i]
        out[i] = 3.0 * x[i]


def example_neighbours(rng, size="small"):
    n = {"small": 12}.get(size, size) if isinstance(size, str) else int(size)
    grid = rng.standard_normal((n, n + 5))
    expected = sum(np.roll(grid, (-dx, -dy), axis=(0, 1)) for dx, dy in NEIGHBOURS) + 2.0
    return dict(kernel=neighbours, griddim=(math.ceil(n / 8), math.ceil((n + 5) / 8)), blockdim=(8, 8),
                args=[grid, np.zeros_like(grid)], expected={1: expected}, rtol=1e-12)


def example_shifted(rng, size="small"):
    n = {"small": 64}.get(size, size) if isinstance(size, str) else int(size)
    x, offset = rng.standard_normal(n), 1
    expected = np.zeros(n)
    for k in range(n // 4):
        for i in range(4):
            j = i + offset + 4 * k
            if j < n:
                expected[j] = x[j] * j
    return dict(kernel=shifted, griddim=math.ceil(n / 4 / 32), blockdim=32, args=[x, np.zeros(n), offset],
                expected={1: expected})


def example_bloch(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    m0, pd = rng.standard_normal(n), 0.5
    expected = np.zeros((n, 3))
    for k in range(n):
        m = [(m0[k] + i) * pd ** 3 for i in range(3)]
        t = m0[k] * 0.25
        expected[k] = [m[i] + (t * i) * (1.0 - t) + (1.0 - t) for i in range(3)]
    return dict(kernel=bloch, griddim=math.ceil(n / 32), blockdim=32, args=[np.zeros((n, 3)), m0, pd],
                expected={0: expected}, rtol=1e-12)


def example_slip(rng, size="small"):
    n = {"small": 50}.get(size, size) if isinstance(size, str) else int(size)
    x = rng.standard_normal(n)
    return dict(kernel=slip, griddim=math.ceil(n / 32), blockdim=32, args=[x, np.zeros(n)], expected={1: 3.0 * x})
