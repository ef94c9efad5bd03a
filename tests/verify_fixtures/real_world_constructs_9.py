"""Constructs the twenty-fifth and twenty-sixth collections of public kernels found missing: a bool flag tested
with `is True` / `is not False` (a spiking network's learning switch), a structured dtype imported from another
module of the package and named in the kernel's types, and a helper whose cuda.jit carries `nopython=True`
(numba-cuda ignores it where a kernel calls the helper)."""
import math

import numpy as np
from numba import cuda

from rw9_layout import State

NUMBA2CUDA_TYPES = {"totals": "stats=State[::1], out=float64[::1]"}


@cuda.jit("void(float64[::1], float64[::1], boolean, boolean)")
def gated(x, out, learn, decay):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i]
        if learn is True:
            out[i] += 1.0
        if decay is not False:
            out[i] *= 0.5


def example_gated(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    x = rng.uniform(-1.0, 1.0, n)
    # NumPy's booleans, as a host loop over a flags array passes them: `np.True_ is True` is False in Python
    return dict(kernel=gated, griddim=math.ceil(n / 32), blockdim=32, args=[x, np.zeros(n), np.True_, np.False_],
                expected={1: x + 1.0})


@cuda.jit
def totals(stats, out):
    i = cuda.grid(1)
    if i < stats.shape[0]:
        out[i] = stats[i]["soil"] + stats[i]["water"] * stats[i]["speed"]


def example_totals(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    stats = np.zeros(n, State)
    stats["soil"], stats["water"] = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    stats["speed"] = rng.uniform(-2, 2, n)
    expected = stats["soil"].astype(np.float64) + stats["water"].astype(np.float64) * stats["speed"]
    return dict(kernel=totals, griddim=math.ceil(n / 32), blockdim=32, args=[stats, np.zeros(n)],
                expected={1: expected})


@cuda.jit(nopython=True, parallel=True)
def damp(a, i, k):
    a[i] = a[i] * k


@cuda.jit("void(float32[::1], float32)")
def walk(a, k):
    i = cuda.grid(1)
    if i < a.shape[0]:
        damp(a, i, k)


def example_walk(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    a = rng.uniform(-1.0, 1.0, n).astype(np.float32)
    return dict(kernel=walk, griddim=math.ceil(n / 32), blockdim=32, args=[a, np.float32(0.25)],
                expected={0: a * np.float32(0.25)})
