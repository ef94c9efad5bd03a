"""More constructs of kernels collected from public projects (issue 17), each verified against the Numba
original: a dtype, an array size, cuda.atomic.add and a device function passed to one device function (numba-cuda's
atomics tests); default arguments; zip() of an enumerate(); tuple slices; the rows of a 2-D array;
a named slice of a row (a ray tracer); a power of a literal base (a quantum simulator); a counter that fits 32
bits read in int64 arithmetic; atomics on the parts of complex elements (fbpic's deposition); a parameter rebound
to a local array or to a view of itself, a local array name bound twice, and a device function that returns the
array it was given (a ray tracer's shading); a device function that returns None on some paths, an Optional
(numba-examples' histogram); a tuple of tuples indexed at run time (a lattice Boltzmann velocity set); raise and
assert, which stop the thread; a tuple of arrays passed to a device function."""
import math

import numpy as np
from numba import cuda, float64, int32, uint32


@cuda.jit(device=True)
def cast_none(num):
    return num


@cuda.jit(device=True)
def cast_int(num):
    return int(num)


@cuda.jit(device=True)
def shared_op(ary, idx, op2, ary_dtype, nelem, binop_func, cast_func, init):
    tid = cuda.threadIdx.x
    sm = cuda.shared.array(nelem, ary_dtype)
    sm[tid] = init
    cuda.syncthreads()
    b = cast_func(idx[tid] % nelem) % nelem  # -1e-300 % 32.0 is 32.0 in floats: kept inside the array
    binop_func(sm, b, op2)
    cuda.syncthreads()
    ary[tid] = sm[tid]


@cuda.jit("void(uint32[::1], uint32[::1])")
def atomic_bins(idx, ary):
    shared_op(ary, idx, 1, uint32, 32, cuda.atomic.add, cast_none, 0)


@cuda.jit("void(float64[::1], float64[::1])")
def atomic_peaks(idx, ary):
    shared_op(ary, idx, 1.5, float64, 32, cuda.atomic.max, cast_int, -1.0)


@cuda.jit("void(complex128[::1], float64[::1])")
def deposit(grid, w):
    i = cuda.grid(1)
    if i < w.shape[0]:  # one add per real part, only 1.0s to the imaginary parts: the same result in any order
        cuda.atomic.add(grid.real, i % grid.shape[0], w[i])
        cuda.atomic.add(grid.imag, (i * 7) % grid.shape[0], 1.0)


@cuda.jit(device=True)
def shade(light, p):
    light = cuda.local.array(3, dtype=float64)  # the caller's light is not used from here on
    for k in range(3):
        light[k] = p[k] * 2.0 - k
    return light[0] * p[0] + light[1] * p[1] + light[2] * p[2]


@cuda.jit(device=True)
def tint(color, w):
    for k in range(3):
        color[k] = color[k] * w
    return color


@cuda.jit("void(float64[::1], float64[:, ::1], float64[::1])")
def rebound(light, points, out):
    i = cuda.grid(1)
    if i < points.shape[0]:
        acc = cuda.local.array(2, dtype=float64)
        points = points[i]  # a parameter rebound to a view of itself, after the bounds check read it
        acc[0] = shade(light, points)
        acc[1] = light[i % 3]
        first = acc[0] + acc[1]
        acc = cuda.local.array(3, dtype=float64)
        for k in range(3):
            acc[k] = first * k
        tint(acc, 0.5)
        t = tint(acc, 3.0)
        out[i] = t[0] + t[1] + t[2]


@cuda.jit(device=True)
def bin_of(x, lo, hi, n):
    if x == hi:
        return n - 1
    b = int(n * (x - lo) / (hi - lo))
    if b < 0 or b >= n:
        return None
    return b


@cuda.jit("void(float64[::1], int64[::1], float64[::1])")
def binned(x, hist, where):
    i = cuda.grid(1)
    if i < x.shape[0]:
        b = bin_of(x[i], -2.0, 2.0, hist.shape[0])
        if b is not None:
            cuda.atomic.add(hist, b, 1)
        if b is None:
            where[i] = -1.0
            return
        where[i] = b * 0.5
        c = bin_of(x[i] * 3.0, -2.0, 2.0, hist.shape[0])  # None where |3x| > 2: Numba stops the thread there
        where[i] += c * 100.0


@cuda.jit("void(float64[::1], float64[::1])")
def checked(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = -1.0
        if x[i] < -1.0:
            raise ValueError("below -1")  # Numba stops the thread here (nothing reaches the host without debug)
        assert x[i] < 1.0
        out[i] = x[i] * 2.0


@cuda.jit(device=True)
def spread(pair, j, v):
    pair[0][j] = v
    pair[1][j] = v * 2.0
    return pair[0].shape[0] + len(pair[1])


@cuda.jit("void(float64[:, ::1], float64[::1], float64[::1], int64[::1])")
def pairs(m, a, b, n):
    j = cuda.grid(1)
    if j < a.shape[0]:
        n[j] = spread((a, m[1, :]), j, m[0, j])  # a tuple of arrays passed to a device function (a ray tracer)
        n[j] += spread((b, m[2]), j, 1.5)


VELOCITIES = ((0, 0), (1, 0), (0, 1), (-1, 0), (0, -1))
WEIGHTS = (0.4, 0.15, 0.15, 0.15, 0.15)


@cuda.jit("void(float64[:, ::1], float64[:, ::1])")
def stream(f, out):
    x, y = cuda.grid(2)
    nx, ny = f.shape
    if x < nx and y < ny:
        acc = 0.0
        for k in range(5):
            c = VELOCITIES[k]  # a tuple of tuples indexed at run time (a lattice Boltzmann velocity set)
            acc += WEIGHTS[k] * f[(x + c[0]) % nx, (y + VELOCITIES[k][1]) % ny]
        out[x, y] = acc


@cuda.jit(device=True)
def scaled(x, k=2.0, off=1):
    return x * k + off


@cuda.jit(device=True)
def dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@cuda.jit(device=True)
def extract_bit(ctrl, index):
    return (index & (2**ctrl)) // (2**ctrl)


@cuda.jit("void(float64[:, ::1], float64[::1], int32, float64[::1])")
def mixed(spheres, y, m, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        center = spheres[i, :3]
        ny, nx = spheres.shape[0:2]
        acc = 0.0
        for (k, xv), yv in zip(enumerate(center), y):
            acc += xv * yv + k
        hits = 0
        for k in range(m):
            if spheres[i, k % nx] > 0:
                hits += 1
        nb = cuda.local.array((2, 2), int32)
        nb[0, 0], nb[0, 1], nb[1, 0], nb[1, 1] = 0, 1, 1, 2
        s = 0.0
        for row in nb:
            s += spheres[i, row[0]] * row[1]
        out[i] = (acc + dot3(center, center) + scaled(center[0]) + scaled(s, 2.0, 3) + hits * 1000000000
                  + extract_bit(2, i) + ny + math.remainder(acc, 0.75))


def example_atomic_bins(rng, size="small"):
    idx = rng.integers(0, 1000, 32).astype(np.uint32)
    expected = np.zeros(32, np.uint32)
    np.add.at(expected, idx % 32, 1)
    return dict(kernel=atomic_bins, griddim=1, blockdim=32, args=[idx, np.zeros(32, np.uint32)],
                expected={1: expected})


def example_atomic_peaks(rng, size="small"):
    idx = rng.uniform(0, 100, 32)
    hit = {int(v % 32) for v in idx}
    expected = np.array([1.5 if t in hit else -1.0 for t in range(32)])
    return dict(kernel=atomic_peaks, griddim=1, blockdim=32, args=[idx, np.zeros(32)], expected={1: expected})


def example_rebound(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    light, points = rng.standard_normal(3), rng.standard_normal((n, 3))
    expected = np.zeros(n)
    for i in range(n):
        p = points[i]
        first = sum((p[k] * 2.0 - k) * p[k] for k in range(3)) + light[i % 3]
        expected[i] = (first * 0 + first * 1 + first * 2) * 1.5
    return dict(kernel=rebound, griddim=math.ceil(n / 32), blockdim=32, args=[light, points, np.zeros(n)],
                expected={2: expected}, rtol=1e-12)


def example_binned(rng, size="small"):
    n = {"small": 200}.get(size, size) if isinstance(size, str) else int(size)
    x = rng.standard_normal(n) * 1.5
    hist, where = np.zeros(10, np.int64), np.full(n, -1.0)
    for i, v in enumerate(x):
        b = 9 if v == 2.0 else int(10 * (v + 2.0) / 4.0)
        if 0 <= b < 10:
            hist[b] += 1
            where[i] = b * 0.5
            c = 9 if v * 3.0 == 2.0 else int(10 * (v * 3.0 + 2.0) / 4.0)
            if 0 <= c < 10:
                where[i] += c * 100.0
    return dict(kernel=binned, griddim=math.ceil(n / 64), blockdim=64, args=[x, np.zeros(10, np.int64),
                                                                             np.zeros(n)],
                expected={1: hist, 2: where})


def example_stream(rng, size="small"):
    n = {"small": 12}.get(size, size) if isinstance(size, str) else int(size)
    f = rng.standard_normal((n, n + 3))
    expected = sum(w * np.roll(f, (-cx, -cy), axis=(0, 1)) for (cx, cy), w in zip(VELOCITIES, WEIGHTS))
    return dict(kernel=stream, griddim=(math.ceil(n / 8), math.ceil((n + 3) / 8)), blockdim=(8, 8),
                args=[f, np.zeros_like(f)], expected={1: expected}, rtol=1e-12)


def example_checked(rng, size="small"):
    n = {"small": 100}.get(size, size) if isinstance(size, str) else int(size)
    x = rng.standard_normal(n)
    expected = np.where((x >= -1.0) & (x < 1.0), x * 2.0, -1.0)
    return dict(kernel=checked, griddim=math.ceil(n / 32), blockdim=32, args=[x, np.zeros(n)], expected={1: expected})


def example_pairs(rng, size="small"):
    n = {"small": 50}.get(size, size) if isinstance(size, str) else int(size)
    m = rng.standard_normal((3, n))
    want = m.copy()
    want[1] = m[0] * 2.0
    want[2] = 3.0
    return dict(kernel=pairs, griddim=math.ceil(n / 32), blockdim=32,
                args=[m, np.zeros(n), np.zeros(n), np.zeros(n, np.int64)],
                expected={0: want, 1: m[0].copy(), 2: np.full(n, 1.5), 3: np.full(n, 4 * n)})


def example_mixed(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    spheres = rng.standard_normal((n, 5))
    y = rng.standard_normal(4)
    m = 7
    expected = np.zeros(n)
    for i in range(n):
        c = spheres[i, :3]
        acc = sum(c[k] * y[k] + k for k in range(3))
        hits = sum(1 for k in range(m) if spheres[i, k % 5] > 0)
        s = spheres[i, 0] * 1 + spheres[i, 1] * 2
        expected[i] = (acc + (c * c).sum() + (c[0] * 2 + 1) + (s * 2 + 3) + hits * 1000000000
                       + ((i >> 2) & 1) + n + math.remainder(acc, 0.75))
    return dict(kernel=mixed, griddim=math.ceil(n / 32), blockdim=32, args=[spheres, y, m, np.zeros(n)],
                expected={3: expected}, rtol=1e-12)


def example_deposit(rng, size="small"):
    n = {"small": 96}.get(size, size) if isinstance(size, str) else int(size)
    w = rng.standard_normal(n)
    grid = np.zeros(n, np.complex128)
    expected = np.zeros(n, np.complex128)
    for i in range(n):
        expected[i] += w[i]
        expected[(i * 7) % n] += 1j
    return dict(kernel=deposit, griddim=math.ceil(n / 32), blockdim=32, args=[grid, w], expected={0: expected},
                inout={0})
