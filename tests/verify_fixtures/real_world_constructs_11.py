"""Constructs the twenty-ninth and later collections of public kernels found missing. First, a name Numba types
per use: an int index rebound to a float on one branch (a spectrograph simulator's alias sampling: `k` indexes as
an int, then `k = alias[k]` makes it a float after the join), and a counter whose int value feeds a hash before a
float rebinding; `.T` of a 2-D array; a chained assignment whose value reads a target (`a[i] = v = a[i] + 1.0`,
a FEM code's): Python evaluates the value once, then binds the targets left to right; a string used as a tag
(`hit = ""`, `hit = "tri"`, `if hit == "light":`) and a local array made on the branch that goes on and read after
the if (a ray tracer's, whose other branches leave the loop); the columns of a 2-D array as the rows of its transpose
(a sudoku solver's `for col in b.T:`)."""
import math

import numpy as np
from numba import cuda, float32, float64


@cuda.jit("void(float64[::1], float32[::1], float64[::1], int64[::1])")
def alias_draw(u, alias, out, masks):
    i = cuda.grid(1)
    if i < out.shape[0]:
        k = int(u[i] * u.shape[0])
        v = u[k]
        if v < 0.5:
            k = alias[k]
        m = i + 1
        masks[i] = (m * 2654435761) & 0xFFFF
        if v > 0.75:
            m = v
        out[i] = k + v + m


def example_alias_draw(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    u = rng.random(n)
    alias = rng.integers(0, n, n).astype(np.float32)
    k = (u * n).astype(np.int64)
    v = u[k]
    kf = np.where(v < 0.5, alias[k].astype(np.float64), k.astype(np.float64))
    m = np.arange(n) + 1
    masks = (m * 2654435761) & 0xFFFF
    mf = np.where(v > 0.75, v, m.astype(np.float64))
    return dict(kernel=alias_draw, griddim=math.ceil(n / 32), blockdim=32,
                args=[u, alias, np.zeros(n), np.zeros(n, np.int64)], expected={2: kf + v + mf, 3: masks})


@cuda.jit(device=True)
def copy_into(src, dst):
    for r in range(dst.shape[0]):
        for c in range(dst.shape[1]):
            dst[r, c] = src[r, c]


@cuda.jit("void(float32[:, ::1], float32[:, ::1], float32[:, ::1], float32[::1, :])")
def transposed(a, out, out2, f):
    # an fMRI toolkit's outer products: `.T` of a kernel's argument passed to a device function, of a shared tile,
    # of a column-major argument, and named
    i = cuda.grid(1)
    if i == 0:
        copy_into(a.T, out)
    at = a.T
    tile = cuda.shared.array((4, 8), float32)
    if i < 4:
        for j in range(8):
            tile[i, j] = i * 10 + j
    cuda.syncthreads()
    if i < at.shape[0]:
        for j in range(at.shape[1]):
            out2[i, j] = at[i, j] + tile.T[i % 8, j % 4] + f.T[i, j]


def example_transposed(rng, size="small"):
    rows, cols = {"small": (4, 6)}.get(size, (4, 6)) if isinstance(size, str) else (4, int(size))
    a = rng.random((rows, cols)).astype(np.float32)
    f = np.asfortranarray(rng.random((rows, cols)).astype(np.float32))
    tile = (np.arange(4)[:, None] * 10 + np.arange(8)[None, :]).astype(np.float32)
    i, j = np.meshgrid(np.arange(cols), np.arange(rows), indexing="ij")
    out2 = a.T + tile.T[i % 8, j % 4] + f.T
    return dict(kernel=transposed, griddim=math.ceil(cols / 32), blockdim=32,
                args=[a, np.zeros((cols, rows), np.float32), np.zeros((cols, rows), np.float32), f],
                expected={1: a.T.copy(), 2: out2})


@cuda.jit("void(float64[::1], float64[::1], float32[::1])")
def chained(a, keep, small):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = v = a[i] + 1.0
        keep[i] = v
        small[i] = w = a[i] / 3
        keep[i] += w - small[i]


def example_chained(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    a = rng.standard_normal(n)
    v = a + 1.0
    w = v / 3
    small = w.astype(np.float32)
    return dict(kernel=chained, griddim=math.ceil(n / 32), blockdim=32,
                args=[a, np.zeros(n), np.zeros(n, np.float32)],
                expected={0: v, 1: v + (w - small.astype(np.float64)), 2: small})


@cuda.jit(device=True)
def shade(p, scratch):
    scratch[0] = p * 2.0
    scratch[1] = p + 1.0


@cuda.jit("void(float64[::1], int64[::1], float64[::1])")
def tagged(x, kinds, acc):
    i = cuda.grid(1)
    if i < x.shape[0]:
        total = 0.0
        for depth in range(3):
            hit = ""
            v = x[i] * (depth + 1)
            if v > 1.5:
                hit = "light"
            elif v > 0.0:
                hit = "tri"
            if hit == "light":
                kinds[i] += 100
                break
            elif hit != "tri":
                kinds[i] += 1
                break
            else:
                scratch = cuda.local.array(2, float64)
                shade(v, scratch)
            total += scratch[0] + scratch[1]
        acc[i] = total


def example_tagged(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    x = rng.standard_normal(n)
    kinds, acc = np.zeros(n, np.int64), np.zeros(n)
    for i in range(n):
        for depth in range(3):
            v = x[i] * (depth + 1)
            if v > 1.5:
                kinds[i] += 100
                break
            if not v > 0.0:
                kinds[i] += 1
                break
            acc[i] += v * 2.0 + (v + 1.0)
    return dict(kernel=tagged, griddim=math.ceil(n / 32), blockdim=32, args=[x, np.zeros(n, np.int64), np.zeros(n)],
                expected={1: kinds, 2: acc})


@cuda.jit(device=True)
def column_total(v):
    t = 0
    for x in v:
        t += x
    return t


@cuda.jit("void(int16[:, ::1], int64[::1], int64[::1])")
def column_sums(a, sums, lasts):
    if cuda.grid(1) == 0:
        k = 0
        for col in a.T:
            sums[k] = column_total(col)
            lasts[k] = col[-1]
            k += 1


def example_column_sums(rng, size="small"):
    rows, cols = {"small": (5, 7)}.get(size, (5, 7)) if isinstance(size, str) else (5, int(size))
    a = rng.integers(-100, 100, (rows, cols)).astype(np.int16)
    return dict(kernel=column_sums, griddim=1, blockdim=32, args=[a, np.zeros(cols, np.int64), np.zeros(cols, np.int64)],
                expected={1: a.sum(axis=0).astype(np.int64), 2: a[-1, :].astype(np.int64)})
