"""Monte Carlo estimate of pi: each thread throws darts at the unit square with its own xoroshiro128+ generator.

The generators are numba.cuda.random's: ``create_xoroshiro128p_states(n, seed)`` gives n independent
streams (each 2**64 draws apart), one per thread, and ``xoroshiro128p_uniform_float32(states, i)`` draws
from stream i and advances it in place. Thread i counts the darts landing inside the quarter circle,
x*x + y*y <= 1; pi is about 4 * sum(hits) / (n * darts). The states come back advanced, so a second
launch continues the streams.

The test is done in float64 from float32 draws: the products are exact there, so a fused multiply-add
and a separate multiply and add give the same answer, and so do the GPU and NumPy.

Launch:  ``monte_carlo_pi[ceil(n / 128), 128](states, darts, hits)`` with ``states`` from
``create_xoroshiro128p_states(n, seed)``.
"""
import math

import numpy as np
from numba import cuda, float64
from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

THREADS = 128

# Numba learns the types at the first launch; the states are the record array Numba makes.
NUMBA2CUDA_TYPES = {"monte_carlo_pi": "states=xoroshiro128p_type[::1], darts=int32, hits=int32[::1]"}


@cuda.jit
def monte_carlo_pi(states, darts, hits):
    i = cuda.grid(1)
    if i < states.shape[0]:
        inside = 0
        for _ in range(darts):
            x = xoroshiro128p_uniform_float32(states, i)
            y = xoroshiro128p_uniform_float32(states, i)
            if float64(x) * x + float64(y) * y <= 1.0:
                inside += 1
        hits[i] = inside


def _rotl(v, k):
    return (v << np.uint64(k)) | (v >> np.uint64(64 - k))


def reference(states, darts):
    """NumPy, all streams at once: (hits, the advanced states). xoroshiro128+ as the generators define it."""
    s0, s1 = states["s0"].copy(), states["s1"].copy()
    hits = np.zeros(len(states), np.int32)

    def uniform():
        nonlocal s0, s1
        with np.errstate(over="ignore"):
            result = s0 + s1
        t = s1 ^ s0
        s0, s1 = _rotl(s0, 55) ^ t ^ (t << np.uint64(14)), _rotl(t, 36)
        return ((result >> np.uint64(11)).astype(np.float64) * 2.0 ** -53).astype(np.float32)

    for _ in range(darts):
        x, y = uniform().astype(np.float64), uniform().astype(np.float64)
        hits += (x * x + y * y <= 1.0).astype(np.int32)
    out = states.copy()
    out["s0"], out["s1"] = s0, s1
    return hits, out


# The sizes `numba2cuda verify` sweeps: a partial last block, one thread.
VERIFY_SIZES = ("small", 1, THREADS - 1, THREADS + 1)

# The simulator draws in Python, one generator call at a time (minutes for these sizes); reference()
# is the generators' own arithmetic, exact, so verify takes it as the reference.
VERIFY_SIM_MAX_THREADS = 0

# "bench": 2**20 streams of 256 darts each; "medium": 2**16 streams of 64.
BENCH_SIZES = ("bench", "medium")


def example(rng, size="small"):
    """One run: inputs, launch configuration and the expected outputs.

    size: "small" (500 streams, 24 darts), "medium", "bench" or an int n (n streams, 20 darts).
    """
    n, darts = {"small": (500, 24), "medium": (1 << 16, 64), "bench": (1 << 20, 256)}[size] \
        if isinstance(size, str) else (int(size), 20)
    seed = int(rng.integers(1, 2**31))
    states = create_xoroshiro128p_states(n, seed=seed).copy_to_host()
    hits = np.zeros(n, np.int32)
    expected_hits, expected_states = reference(states, darts)
    return dict(kernel=monte_carlo_pi, griddim=math.ceil(n / THREADS), blockdim=THREADS, shared=0,
                args=[states, darts, hits], expected={0: expected_states, 2: expected_hits}, inout={0},
                bytes=2 * states.nbytes + hits.nbytes)
