"""Names Numba's SSA gives several variables, as the ray tracer of the thirteenth session's collection writes them:
a matrix's name taken over by a number inside the bounds check and summed there in a loop, a row (a view)
rebound to the tuple a device function returns, a loop counter whose name later holds a row, and a loop over a
list of tuples (each item a tuple variable of its own, the loop variable a tuple); a parameter's name taken
over by the element it reads (`x = x[i]`); and a device function made by `cuda.jit(func_or_sig=None, device=True)`
that returns a tuple of tuples and a number, unpacked before a loop and again in it; and a tuple stored into a
row's slice (a neutron tracer's state update); and a tuple of tuples of tuples passed to a device function
that unpacks one by a run-time index into nested targets (a neutron guide's planes); and two shared buffers
swapped each step (`a, b = b, a`, a cellular automaton's ping-pong); and a tuple one device function returns
passed straight to another, or indexed (a slicer's `minus(p, scaled(0.5, p))`)."""
import math

import numpy as np
from numba import cuda, float32


@cuda.jit(device=True)
def blend(p, q, t):
    return p[0] * (1.0 - t) + q[0] * t, p[1] * (1.0 - t) + q[1] * t, p[2] * (1.0 - t) + q[2] * t


@cuda.jit(func_or_sig=None, device=True)
def reflect(p, d, wall):
    hit = (p[0] + d[0], p[1] + d[1])
    if hit[0] > wall:
        return (wall - (hit[0] - wall), hit[1]), (-d[0], d[1]), 1
    return hit, d, 0


@cuda.jit("void(float64[:, ::1], float64, int32, float64[:, ::1])")
def bounce(start, wall, steps, out):
    i = cuda.grid(1)
    if i < start.shape[0]:
        pos, vel, hits = reflect((start[i, 0], start[i, 1]), (start[i, 2], start[i, 3]), wall)
        for k in range(steps):
            if pos[1] > 10.0:
                continue
            pos, vel, h = reflect(pos, vel, wall)
            hits += h
        out[i, 0] = pos[0]
        out[i, 1] = pos[1] + vel[0]
        out[i, 2] = hits


@cuda.jit("void(float64[:, ::1], float64[:, ::1], float64[:, ::1])")
def shade(basis, pts, out):
    B = basis
    b0, b1 = B[0, :], B[1, :]
    i = cuda.grid(1)
    if i < pts.shape[0]:
        B = b0[0] * pts[i, 0] + b1[1] * pts[i, 1]
        for k in range(3):
            B += b0[k] * pts[i, k] - b1[k]
        q = pts[i, :]
        first = q[2]
        q = blend(q, (1.0, 2.0, 3.0), 0.25)
        s = 0.0
        for p in [q, (B, B, first), (b1[0], b1[1], b1[2])]:
            s += p[0] + p[1] * p[2]
        out[i, 0] = B
        out[i, 1] = s
        out[i, 2] = q[1]


@cuda.jit("void(float32[:, ::1], float32[::1])")
def rows(m, out):
    i = cuda.grid(1)
    if i < m.shape[0]:
        acc = 0.0
        for row in range(m.shape[1]):
            acc += m[i, row] * row
        row = m[i]
        out[i] = acc + row[0]


@cuda.jit("void(float32[::1], float32[::1])")
def square(x, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        x = x[i]
        out[i] = x * x


def example_square(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    x = rng.uniform(-1.0, 1.0, n).astype(np.float32)
    return dict(kernel=square, griddim=math.ceil(n / 32), blockdim=32, args=[x, np.zeros(n, np.float32)],
                expected={1: x * x})


@cuda.jit("void(float64[:, ::1], float64)")
def advance(state, dt):
    i = cuda.grid(1)
    if i < state.shape[0]:
        p = state[i]
        x, y, vx, vy = p[0], p[1], p[2], p[3]
        p[:2] = x + vx * dt, y + vy * dt


@cuda.jit(device=True)
def distance(planes, k, x, y, z):
    (px, py, pz), (nx, ny, nz) = planes[k]
    return (x - px) * nx + (y - py) * ny + (z - pz) * nz


@cuda.jit("void(float64[::1], float64[:, ::1], float64[:, ::1])")
def sides(p, pts, out):
    planes = (((p[0], p[1], p[2]), (p[3], p[4], p[5])),
              ((p[6], p[7], p[8]), (p[9], p[10], p[11])))
    i = cuda.grid(1)
    if i < pts.shape[0]:
        for k in range(2):
            out[i, k] = distance(planes, k, pts[i, 0], pts[i, 1], pts[i, 2])


@cuda.jit("void(float32[::1], int32)")
def pingpong(data, steps):
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    a = cuda.shared.array(32, dtype=float32)
    b = cuda.shared.array(32, dtype=float32)
    a[t] = data[i]
    cuda.syncthreads()
    for _ in range(steps):
        b[t] = 0.5 * (a[t] + a[(t + 1) % 32])
        cuda.syncthreads()
        a, b = b, a
    data[i] = a[t]


@cuda.jit(device=True)
def scaled(a, v):
    return a * v[0], a * v[1], a * v[2]


@cuda.jit(device=True)
def minus(u, v):
    return u[0] - v[0], u[1] - v[1], u[2] - v[2]


@cuda.jit("void(float64[:, ::1], float64[:, ::1])")
def slicer(pts, out):
    i = cuda.grid(1)
    if i < pts.shape[0]:
        p = (pts[i, 0], pts[i, 1], pts[i, 2])
        d = minus(p, scaled(0.5, p))
        out[i, 0], out[i, 1] = d[0] + d[2], scaled(3.0, d)[1]


def example_slicer(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    pts = rng.uniform(-1.0, 1.0, (n, 3))
    d = pts - 0.5 * pts
    want = np.stack([d[:, 0] + d[:, 2], 3.0 * d[:, 1]], axis=1)
    return dict(kernel=slicer, griddim=math.ceil(n / 32), blockdim=32, args=[pts, np.zeros((n, 2))],
                expected={1: want}, rtol=1e-12)


def example_pingpong(rng, size="small"):
    blocks = {"small": 2}.get(size, size) if isinstance(size, str) else int(size)
    data = rng.uniform(-1.0, 1.0, 32 * blocks).astype(np.float32)
    want = data.reshape(blocks, 32).copy()
    for _ in range(5):
        want = (np.float32(0.5) * (want + np.roll(want, -1, axis=1))).astype(np.float32)
    return dict(kernel=pingpong, griddim=blocks, blockdim=32, args=[data, 5], expected={0: want.reshape(-1)})


def example_sides(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    p = rng.uniform(-1.0, 1.0, 12)
    pts = rng.uniform(-1.0, 1.0, (n, 3))
    planes = p.reshape(2, 2, 3)
    want = np.stack([((pts - planes[k, 0]) * planes[k, 1]).sum(axis=1) for k in range(2)], axis=1)
    return dict(kernel=sides, griddim=math.ceil(n / 32), blockdim=32, args=[p, pts, np.zeros((n, 2))],
                expected={2: want}, rtol=1e-12)


def example_advance(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    state = rng.uniform(-1.0, 1.0, (n, 4))
    want = state.copy()
    want[:, :2] = state[:, :2] + state[:, 2:] * 0.25
    return dict(kernel=advance, griddim=math.ceil(n / 32), blockdim=32, args=[state, 0.25], expected={0: want},
                rtol=1e-12)


def example_bounce(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    start = rng.uniform(-1.0, 1.0, (n, 4))
    want = np.zeros((n, 3))
    for i in range(n):
        pos, vel, hits = (start[i, 0], start[i, 1]), (start[i, 2], start[i, 3]), 0
        for k in range(6):
            if k > 0 and pos[1] > 10.0:
                continue
            hit = (pos[0] + vel[0], pos[1] + vel[1])
            if hit[0] > 0.5:
                pos, vel, hits = (0.5 - (hit[0] - 0.5), hit[1]), (-vel[0], vel[1]), hits + 1
            else:
                pos = hit
        want[i] = pos[0], pos[1] + vel[0], hits
    return dict(kernel=bounce, griddim=math.ceil(n / 32), blockdim=32, args=[start, 0.5, 5, np.zeros((n, 3))],
                expected={3: want}, rtol=1e-12)


def example_shade(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    basis = rng.uniform(-1.0, 1.0, (2, 3))
    pts = rng.uniform(-1.0, 1.0, (n, 3))
    b0, b1 = basis
    want = np.zeros((n, 3))
    for i in range(n):
        B = b0[0] * pts[i, 0] + b1[1] * pts[i, 1]
        for k in range(3):
            B += b0[k] * pts[i, k] - b1[k]
        q = [pts[i, k] * 0.75 + (k + 1.0) * 0.25 for k in range(3)]
        s = 0.0
        for p in (q, (B, B, pts[i, 2]), tuple(b1)):
            s += p[0] + p[1] * p[2]
        want[i] = B, s, q[1]
    return dict(kernel=shade, griddim=math.ceil(n / 32), blockdim=32, args=[basis, pts, np.zeros((n, 3))],
                expected={2: want}, rtol=1e-12)


def example_rows(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    m = rng.uniform(-1.0, 1.0, (n, 5)).astype(np.float32)
    want = (m.astype(np.float64) * np.arange(5)).sum(axis=1) + m[:, 0]
    return dict(kernel=rows, griddim=math.ceil(n / 32), blockdim=32, args=[m, np.zeros(n, np.float32)],
                expected={1: want.astype(np.float32)}, rtol=1e-5)
