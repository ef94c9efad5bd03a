"""Constructs of the collections of public kernels gathered in the twelfth session (issue 17), each verified against
the Numba original: a column-major matrix (a transpose passed as it lies, `float32[::1, :]`); device functions
that give back the arrays they were given along with a number (a hash's sponge state); locals set to None and later
to numbers (Numba's Optional: `is None` tests, and a statement reading one while None stops the thread); rows of a
window unpacked by a loop (`for x, y in pts`); an IntEnum's members and a list searched with `in`."""
import math
from enum import IntEnum

import numpy as np
from numba import cuda, uint8, uint64


@cuda.jit("void(float32[:, ::1], float32[::1, :], float32[:, ::1])")
def transposed(a, b, c):
    i, j = cuda.grid(2)
    if i < c.shape[0] and j < c.shape[1]:
        s = 0.0
        for k in range(a.shape[1]):
            s += a[i, k] * b[k, j]
        c[i, j] = s


@cuda.jit(device=True)
def churn(state, buf, n):
    for i in range(4):
        state[i] = (state[i] * uint64(1099511628211) + uint64(buf[i])) ^ (state[i] >> uint64(7))
        buf[i] = 0
    n = 0
    return state, buf, n


@cuda.jit(device=True)
def feed(state, data, buf, n):
    for j in range(data.shape[0]):
        buf[n] ^= data[j]
        n += 1
        if n == 4:
            state, buf, n = churn(state, buf, n)
    return state, buf, n


@cuda.jit(device=True)
def close(state, buf, n):
    buf[n] ^= 0x80
    return churn(state, buf, n)


@cuda.jit("void(uint8[:, ::1], uint64[:, ::1], int64[::1])")
def sponge(data, out, pending):
    t = cuda.grid(1)
    if t < data.shape[0]:
        state = cuda.local.array(4, dtype=uint64)
        buf = cuda.local.array(4, dtype=uint8)
        for i in range(4):
            state[i] = t + i
            buf[i] = 0
        n = 0
        state, buf, n = feed(state, data[t], buf, n)
        pending[t] = n
        state, buf, n = close(state, buf, n)
        for i in range(4):
            out[t, i] = state[i]


@cuda.jit(device=True)
def settle(x):
    s = None
    for k in range(3):
        s = math.sin(x + k)
        if s > 2.0:  # never: a loop that may leave early is what numba-cuda types as Optional after it
            break
    return s


@cuda.jit("void(float64[::1], float64[::1], float64[::1])")
def search(x, best_of, solved):
    i = cuda.grid(1)
    if i < x.size:
        best = None
        for j in range(i):
            if x[j] > 0.5:
                best = x[j]
            if x[j] > 2.0:  # never (x lies in [-1, 1)), as in settle
                break
        if best is None:
            best_of[i] = -1.0
        else:
            best_of[i] = best
        solved[i] = settle(x[i])
        late = None
        for r in range(2):  # assigned on every path Numba runs; the read after the loop is guarded all the same
            late = x[i] * 2.0 + r
            if late > 1e300:
                break
        solved[i] += late


@cuda.jit("void(float64[:, :, ::1], int32[::1], float64[::1])")
def rows(layouts, inside, spread):
    k = cuda.grid(1)
    if k < layouts.shape[0]:
        ok = 1
        for x, y in layouts[k, :, :2]:
            if not (-1.0 < x < 1.0 and -1.0 < y < 1.0):
                ok = 0
        inside[k] = ok
        s = 0.0
        for a, b, c in layouts[k]:
            s += a * 100.0 + b * 10.0 + c
        spread[k] = s


class HTTPStatus(IntEnum):
    OK = 200
    NOT_FOUND = 404
    INTERNAL_SERVER_ERROR = 500


@cuda.jit("void(int32[::1], int32[::1])")
def statuses(codes, out):
    i = cuda.grid(1)
    if i < codes.size:
        if codes[i] >= HTTPStatus.INTERNAL_SERVER_ERROR:
            out[i] = codes[i] - HTTPStatus.NOT_FOUND
        elif codes[i] % 10 not in [3, 4]:
            out[i] = codes[i] + HTTPStatus.OK
        else:
            out[i] = 0


def example_transposed(rng, size="small"):
    n = {"small": 9}.get(size, size) if isinstance(size, str) else int(size)
    a = rng.standard_normal((n, n + 3)).astype(np.float32)
    y = rng.standard_normal((n + 1, n + 3)).astype(np.float32)
    b = y.T  # column-major, as the transpose lies
    expected = np.array([[sum(float(a[i, k] * b[k, j]) for k in range(n + 3)) for j in range(n + 1)]
                         for i in range(n)], dtype=np.float32)
    return dict(kernel=transposed, griddim=(math.ceil(n / 8), math.ceil((n + 1) / 8)), blockdim=(8, 8),
                args=[a, b, np.zeros((n, n + 1), np.float32)], expected={2: expected}, rtol=1e-6)


def example_sponge(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    data = rng.integers(0, 256, (n, 11)).astype(np.uint8)
    return dict(kernel=sponge, griddim=math.ceil(n / 32), blockdim=32,
                args=[data, np.zeros((n, 4), np.uint64), np.zeros(n, np.int64)], expected={1: None, 2: None})


def example_search(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    x = rng.uniform(-1.0, 1.0, n)
    return dict(kernel=search, griddim=math.ceil(n / 32), blockdim=32,
                args=[x, np.zeros(n), np.zeros(n)], expected={1: None, 2: None}, rtol=1e-12)


def example_rows(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    layouts = rng.uniform(-1.2, 1.2, (n, 5, 3))
    return dict(kernel=rows, griddim=math.ceil(n / 32), blockdim=32,
                args=[layouts, np.zeros(n, np.int32), np.zeros(n)], expected={1: None, 2: None}, rtol=1e-12)


def example_statuses(rng, size="small"):
    n = {"small": 64}.get(size, size) if isinstance(size, str) else int(size)
    codes = rng.integers(100, 600, n).astype(np.int32)
    return dict(kernel=statuses, griddim=math.ceil(n / 32), blockdim=32, args=[codes, np.zeros(n, np.int32)],
                expected={1: None})
