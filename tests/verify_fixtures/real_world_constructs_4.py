"""Constructs of the seventh to ninth collections of public kernels (issue 17), each verified against the Numba
original: strided views, a column `b[:, j]` passed to a device function and a ray tracer's pixel
`p[0:3, x, y]`, written through and read as views of views; and a device function's tuple result kept in one
name (`ray_dir = matmul(R, P)`), passed on as a tuple and reassigned in a loop; device functions returning a tuple
held in a name or another's tuple (a volume renderer's camera), and a column by a negative index (`p[:, -1]`)."""
import math

import numpy as np
from numba import cuda


@cuda.jit(device=True)
def dot(u, v):
    s = 0.0
    for i in range(u.shape[0]):
        s += u[i] * v[i]
    return s


@cuda.jit("void(float64[:, ::1], float64[:, ::1], float64[:, ::1])")
def columns(a, b, c):
    i, j = cuda.grid(2)
    if i < c.shape[0] and j < c.shape[1]:
        c[i, j] = dot(a[i, :], b[:, j])


@cuda.jit("void(float64[:, :, ::1], float64[:, ::1], float64[:, ::1])")
def pixels(p, out, m):
    x, y = cuda.grid(2)
    if x < p.shape[1] and y < p.shape[2]:
        P = p[0:3, x, y]
        square = p[1:3, 0:2, y]
        out[x, y] = dot(P, P) + P[1:][0] + P[-1] + square[1, 0] + dot(square[1], square[0])
        col = m[:, y]
        col[x] = col[x] * 2.0 + x


@cuda.jit(device=True)
def rotate(r, v):
    r0, r1, r2 = r
    return (dot(r0, v), dot(r1, v), dot(r2, v))


@cuda.jit(device=True)
def normalize(v):
    n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    return (v[0] / n, v[1] / n, v[2] / n)


@cuda.jit("void(float64[:, ::1], float64[:, ::1], float64[:, ::1])")
def rays(rot, dirs, out):
    i = cuda.grid(1)
    if i < dirs.shape[0]:
        ray = rotate((rot[0, :], rot[1, :], rot[2, :]), dirs[i])
        ray = normalize(ray)
        acc = (0.0, 0.0, 0.0)
        for k in range(3):
            acc = (acc[0] + ray[k], acc[1] + k * ray[k], acc[2] - ray[k])
        for k in range(3):
            out[i, k] = ray[k] + acc[k]


@cuda.jit(device=True)
def direction(p, q):
    d = normalize((q[0] - p[0], q[1] - p[1], q[2] - p[2]))
    return d


@cuda.jit(device=True)
def shade(x):
    color = (x, 2.0 * x, 0.5)
    if x < 0:
        color = (0.0, -x, 1.0)
    return color


@cuda.jit(device=True)
def unit(v):
    return normalize(v)


@cuda.jit("void(float64[:, ::1], float64[:, ::1])")
def camera(p, out):
    i = cuda.grid(1)
    if i + 1 < p.shape[0]:
        d = direction(p[i], p[i + 1])
        c = shade(p[i, 0])
        u = unit(d)
        last = p[:, -1]
        out[i, 0] = d[0] + c[1] + u[2] + last[i]
        out[i, 1] = c[0] * c[2]


def example_columns(rng, size="small"):
    n = {"small": 9}.get(size, size) if isinstance(size, str) else int(size)
    a, b = rng.standard_normal((n, n + 2)), rng.standard_normal((n + 2, n + 1))
    expected = np.array([[sum(a[i, k] * b[k, j] for k in range(n + 2)) for j in range(n + 1)] for i in range(n)])
    return dict(kernel=columns, griddim=(math.ceil(n / 8), math.ceil((n + 1) / 8)), blockdim=(8, 8),
                args=[a, b, np.zeros((n, n + 1))], expected={2: expected}, rtol=1e-12)


def example_pixels(rng, size="small"):
    n = {"small": 6}.get(size, size) if isinstance(size, str) else int(size)
    p, m = rng.standard_normal((4, n, n + 1)), rng.standard_normal((n, n + 1))
    out = np.zeros((n, n + 1))
    for x in range(n):
        for y in range(n + 1):
            P, sq = p[0:3, x, y], p[1:3, 0:2, y]
            out[x, y] = P @ P + P[1] + P[2] + sq[1, 0] + sq[1] @ sq[0]
    return dict(kernel=pixels, griddim=(math.ceil(n / 8), math.ceil((n + 1) / 8)), blockdim=(8, 8),
                args=[p, np.zeros((n, n + 1)), m], expected={1: out, 2: m * 2.0 + np.arange(n)[:, None]},
                rtol=1e-12)


def example_rays(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    rot, dirs = rng.standard_normal((3, 3)), rng.standard_normal((n, 3))
    ray = dirs @ rot.T
    ray /= np.sqrt((ray ** 2).sum(axis=1))[:, None]
    acc = np.stack([ray.sum(axis=1), ray[:, 1] + 2 * ray[:, 2], -ray.sum(axis=1)], axis=1)
    return dict(kernel=rays, griddim=math.ceil(n / 32), blockdim=32, args=[rot, dirs, np.zeros((n, 3))],
                expected={2: ray + acc}, rtol=1e-12)


def example_camera(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    p = rng.standard_normal((n, 3))
    out = np.zeros((n, 2))
    for i in range(n - 1):
        v = [p[i + 1, k] - p[i, k] for k in range(3)]
        norm = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
        d = [x / norm for x in v]
        norm2 = math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
        x = p[i, 0]
        c = (x, 2.0 * x, 0.5) if x >= 0 else (0.0, -x, 1.0)
        out[i] = [d[0] + c[1] + d[2] / norm2 + p[i, 2], c[0] * c[2]]
    return dict(kernel=camera, griddim=math.ceil(n / 32), blockdim=32, args=[p, np.zeros((n, 2))],
                expected={1: out}, rtol=1e-12)
