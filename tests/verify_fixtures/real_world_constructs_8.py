"""Functions defined inside a kernel (a genetic program's generated kernel defines its primitives there; Numba
inlines them where they are called): one reading a local constant, one reading the kernel's parameter and a
per-thread variable, one calling another, one with a default, one a lambda; and the library functions
numba-cuda supports that the sixteenth session's sweep of its documented list found missing: math.nextafter,
math.gamma, the in-place operator functions, NumPy's comparison, logical and bitwise ufuncs on numbers and
arrays, and cmath's inverse trigonometric and hyperbolic functions."""
import cmath
import math
import operator

import numpy as np
from numba import cuda


@cuda.jit("void(float64[::1], float64[::1])")
def primitives(x, out):
    i = cuda.grid(1)
    scale = 0.5

    def neg(v):
        return -v * scale

    def mix(a, wa, b, wb=2.0):
        return a * wa + b * wb

    def around(k):
        return x[k] + x[(k + 1) % x.shape[0]] + i

    def both(k):
        return mix(neg(x[k]), 3.0, around(k))

    half = lambda v: v * 0.5  # noqa: E731 - as a generated kernel binds its primitives
    if i < x.shape[0]:
        out[i] = half(both(i)) * 2.0


def example_primitives(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    x = rng.uniform(-2.0, 2.0, n)
    around = x + np.roll(x, -1) + np.arange(n)
    return dict(kernel=primitives, griddim=math.ceil(n / 32), blockdim=32, args=[x, np.zeros(n)],
                expected={1: -x * 0.5 * 3.0 + around * 2.0}, rtol=1e-12)


@cuda.jit("void(float32[::1], float64[::1], int64[::1], int32[::1], float64[:, ::1])")
def library(x, y, a, e, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        e[i] = operator.irshift(np.int32(a[i]), 1)
        out[i, 0] = np.greater(y[i], 0.5) * 1.0
        out[i, 1] = math.ldexp(y[i], 3) - y[i]
        out[i, 2] = operator.imod(a[i], 7) + operator.ipow(a[i] % 3, 2)
        out[i, 3] = math.nextafter(y[i], 0.0) - y[i]
        out[i, 4] = math.gamma(abs(y[i]) + 0.5)
        v = a[i]
        v = operator.iadd(v, 3)
        v = operator.imul(v, 2)
        v = operator.ixor(v, 5)
        out[i, 5] = operator.ifloordiv(v, 4)
        out[i, 6] = np.greater(x[i], y[i]) + 2 * np.logical_xor(a[i] > 0, y[i] > 0)
        out[i, 7] = np.bitwise_and(a[i], 12) + np.left_shift(a[i], 2) + np.invert(a[i])


@cuda.jit("void(float64[::1], float64[::1], boolean[::1], int64[::1], int64[::1])")
def compare_arrays(x, y, flags, a, bits):
    np.less_equal(x, y, flags)
    np.bitwise_xor(a, 6, bits)


def example_library(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    x = rng.uniform(-100.0, 100.0, n).astype(np.float32)
    y = rng.uniform(-3.0, 3.0, n)
    a = rng.integers(-60, 60, n)
    return dict(kernel=library, griddim=math.ceil(n / 32), blockdim=32,
                args=[x, y, a, np.zeros(n, np.int32), np.zeros((n, 8))], expected={3: None, 4: None})


def example_compare_arrays(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    x, y = rng.uniform(-1.0, 1.0, n), rng.uniform(-1.0, 1.0, n)
    a = rng.integers(-100, 100, n)
    return dict(kernel=compare_arrays, griddim=1, blockdim=1,
                args=[x, y, np.zeros(n, np.bool_), a, np.zeros(n, np.int64)], expected={2: x <= y, 4: a ^ 6})


@cuda.jit("void(complex128[::1], complex64[::1], complex128[:, ::1], complex64[:, ::1])")
def inverse(z, w, out, out32):
    i = cuda.grid(1)
    if i < z.shape[0]:
        out[i, 0] = cmath.acos(z[i])
        out[i, 1] = cmath.asin(z[i])
        out[i, 2] = cmath.atan(z[i])
        out[i, 3] = cmath.acosh(z[i])
        out[i, 4] = cmath.asinh(z[i])
        out[i, 5] = cmath.atanh(z[i])
        out32[i, 0] = cmath.acos(w[i])
        out32[i, 1] = cmath.asin(w[i])
        out32[i, 2] = cmath.atan(w[i])
        out32[i, 3] = cmath.acosh(w[i])
        out32[i, 4] = cmath.asinh(w[i])
        out32[i, 5] = cmath.atanh(w[i])


def example_inverse(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    z = rng.uniform(-3.0, 3.0, n) + 1j * rng.uniform(-3.0, 3.0, n)
    z[:3] = [1e300 + 2j, 1.0 + 1e-30j, -2.0 - 0.0j]  # the far field, atanh's branch near 1, a cut
    w = z.astype(np.complex64)
    w[0] = 1e37 + 2j
    return dict(kernel=inverse, griddim=math.ceil(n / 32), blockdim=32,
                args=[z, w, np.zeros((n, 6), np.complex128), np.zeros((n, 6), np.complex64)],
                expected={2: None, 3: None})
