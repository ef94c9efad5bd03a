"""Records (NumPy structured dtypes), as the public projects of the thirteenth session's collection use them:
particles stepped in place (`p = ps[i]` is a reference into the array, so `p.x += ...` writes it; fields read as
`ps[i].vx` and `ps[i]["vx"]`), NumPy's default packed layout (11-byte hits: every other float64 lies off its
alignment in memory, which Numba writes byte by byte, as an unaligned record), an aligned dtype with a bool field
passed to a device function, whole records copied (`out[i] = ps[j]`), and a field that is an array (`t.xy[k, 0]`)."""
import math

import numpy as np
from numba import cuda, float64, from_dtype, int8, int16, void

particle = np.dtype([("x", np.float32), ("y", np.float32), ("vx", np.float32), ("vy", np.float32),
                     ("mass", np.float64)])
hit = np.dtype([("value", np.float64), ("count", np.int16), ("tag", np.int8)])  # NumPy's default: packed, 11 bytes
cell = np.dtype([("lo", np.float64), ("hi", np.float64), ("alive", np.bool_), ("id", np.int32)], align=True)
cell_t = from_dtype(cell)
track = np.dtype([("n", np.int32), ("xy", np.float32, (4, 2))], align=True)  # an array field: Numba's nestedarray
NUMBA2CUDA_TYPES = {"step": "ps=particle[:], dt=float32, bounce=float64",
                    "measure": "cells=cell[:], widths=float64[:], alive=int64[:]",
                    "centroid": "tracks=track[:], out=float64[:, :]"}


@cuda.jit
def step(ps, dt, bounce):
    i = cuda.grid(1)
    if i < ps.shape[0]:
        p = ps[i]
        p.x += p.vx * dt
        p.y = p.y + ps[i]["vy"] * dt
        if p.x > bounce:
            p.vx = -p.vx
            p["mass"] *= 0.5


@cuda.jit(void(int8[::1], float64[::1], int16[::1], from_dtype(hit)[::1]))
def pack(tags, values, counts, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i].tag = tags[i]
        out[i]["value"] = values[i] * 2.0
        out[i].count = counts[i] + out[i].tag


@cuda.jit(device=True)
def width(c):
    if c.alive:
        return c.hi - c.lo
    return 0.0


@cuda.jit
def measure(cells, widths, alive):
    i = cuda.grid(1)
    if i < cells.shape[0]:
        widths[i] = width(cells[i])
        if cells[i].alive:
            cuda.atomic.add(alive, 0, 1)


@cuda.jit((cell_t[::1], cell_t[::1], cuda.types.int32))
def gather(cells, out, stride):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = cells[(i * stride) % cells.shape[0]]
        out[i].id = i


@cuda.jit
def centroid(tracks, out):
    i = cuda.grid(1)
    if i < tracks.shape[0]:
        t = tracks[i]
        sx = 0.0
        sy = 0.0
        for k in range(t.n):
            sx += t.xy[k, 0]
            sy += t["xy"][k, 1]
        out[i, 0] = sx / max(t.n, 1)
        out[i, 1] = sy / max(t.n, 1)
        t.xy[-1, 1] = -1.0


def _particles(rng, n):
    ps = np.zeros(n, particle)
    for f in ("x", "y", "vx", "vy"):
        ps[f] = rng.uniform(-1.0, 1.0, n)
    ps["mass"] = rng.uniform(0.5, 2.0, n)
    return ps


def _cells(rng, n):
    cells = np.zeros(n, cell)
    cells["lo"] = rng.uniform(-1.0, 0.0, n)
    cells["hi"] = rng.uniform(0.0, 1.0, n)
    cells["alive"] = rng.integers(0, 2, n).astype(bool)
    cells["id"] = np.arange(n)
    return cells


def example_step(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    ps = _particles(rng, n)
    want = ps.copy()
    want["x"] = (ps["x"] + ps["vx"] * np.float32(0.1)).astype(np.float32)
    want["y"] = (ps["y"] + ps["vy"] * np.float32(0.1)).astype(np.float32)
    moved = want["x"] > 0.5
    want["vx"][moved] = -ps["vx"][moved]
    want["mass"][moved] = ps["mass"][moved] * 0.5
    return dict(kernel=step, griddim=math.ceil(n / 32), blockdim=32, args=[ps, np.float32(0.1), 0.5],
                expected={0: want})


def example_pack(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    tags = rng.integers(-5, 5, n).astype(np.int8)
    values = rng.uniform(-1.0, 1.0, n)
    counts = rng.integers(0, 100, n).astype(np.int16)
    want = np.zeros(n, hit)
    want["tag"], want["value"], want["count"] = tags, values * 2.0, counts + tags
    return dict(kernel=pack, griddim=math.ceil(n / 32), blockdim=32, args=[tags, values, counts, np.zeros(n, hit)],
                expected={3: want})


def example_measure(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    cells = _cells(rng, n)
    want = np.where(cells["alive"], cells["hi"] - cells["lo"], 0.0)
    return dict(kernel=measure, griddim=math.ceil(n / 32), blockdim=32,
                args=[cells, np.zeros(n), np.zeros(1, np.int64)],
                expected={1: want, 2: np.array([cells["alive"].sum()])})


def example_gather(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    cells = _cells(rng, n)
    want = cells[(np.arange(n) * 3) % n].copy()
    want["id"] = np.arange(n)
    return dict(kernel=gather, griddim=math.ceil(n / 32), blockdim=32, args=[cells, np.zeros(n, cell), 3],
                expected={1: want})


def example_centroid(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    tracks = np.zeros(n, track)
    tracks["n"] = rng.integers(0, 5, n)
    tracks["xy"] = rng.uniform(-1.0, 1.0, (n, 4, 2))
    return dict(kernel=centroid, griddim=math.ceil(n / 32), blockdim=32, args=[tracks, np.zeros((n, 2))],
                expected={0: None, 1: None})
