"""Constructs the thirty-seventh and later collections of public kernels found translated with types Numba does
not give them. `math.pow(x, int32(3))`: the cast of a literal is an int32 (it prints as `3`, but Numba types
it int32), so the float32 case (float32, int32) is chosen, as for an int32 variable; numba-cuda computes that
case with libdevice's powif, a float64 base's with powi. A device function whose only return is in its loop
returns None when the loop ends (Numba: an Optional result), and a kernel's thread stops where that None is cast."""
import math

import numpy as np
from numba import cuda, int32


@cuda.jit("void(float32[::1], int32[::1], float64[::1], float64[::1])")
def powers(x, n, out, out64):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = math.pow(x[i], int32(3)) + math.pow(x[i], n[i])
        out64[i] = math.pow(out[i], n[i]) + math.fmod(x[i], int32(3))


def example_powers(rng, size="small"):
    k = {"small": 64}.get(size, size) if isinstance(size, str) else int(size)
    x = (rng.random(k) * 3 + 0.5).astype(np.float32)
    n = rng.integers(-3, 6, k).astype(np.int32)
    x64 = x.astype(np.float64)
    out = ((x64 ** 3).astype(np.float32) + (x64 ** n).astype(np.float32)).astype(np.float64)
    out64 = out ** n + np.fmod(x64, 3.0)
    return dict(kernel=powers, griddim=math.ceil(k / 32), blockdim=32,
                args=[x, n, np.zeros(k), np.zeros(k)], expected={2: out, 3: out64})


@cuda.jit(device=True)
def first_at_least(p, table, values):
    for i in range(table.shape[0]):
        if table[i] >= p:
            return 1.0 / values[i]


@cuda.jit("void(float64[::1], float64[::1], float64[::1], float64[::1], int64[::1])")
def lookup(xs, table, values, out, hit):
    """A polymer simulator's table search: past the table's end the device function runs off its end, returns None,
    and Numba's cast of that None to float64 raises: the thread ends before writing out[i] or hit[i]."""
    i = cuda.grid(1)
    if i < xs.shape[0]:
        out[i] = first_at_least(xs[i], table, values)
        hit[i] = 1


def example_lookup(rng, size="small"):
    k = {"small": 64}.get(size, size) if isinstance(size, str) else int(size)
    xs = rng.uniform(0.0, 1.2, k)
    table, values = np.linspace(0.1, 1.0, 10), np.arange(1.0, 11.0)
    out, hit = np.zeros(k), np.zeros(k, np.int64)
    for j in range(k):
        found = np.nonzero(table >= xs[j])[0]
        if found.size:
            out[j], hit[j] = 1.0 / values[found[0]], 1
    return dict(kernel=lookup, griddim=math.ceil(k / 32), blockdim=32,
                args=[xs, table, values, np.zeros(k), np.zeros(k, np.int64)], expected={3: out, 4: hit})
