"""Exponent histogram: how many values fall into each power-of-two range ("binade").

``math.frexp(x)`` splits a float into a mantissa ``m`` with ``0.5 <= |m| < 1`` and an integer
exponent ``e`` with ``x == m * 2**e`` (``frexp(0) == (0.0, 0)``).  Each thread splits one value,
writes its mantissa, and counts its exponent in a histogram of NBINS bins starting at EMIN
(exponents outside are clamped into the first and last bin) with an atomic add, which is how
one looks at the dynamic range of a tensor before choosing a number format.

numba2cuda's rules do not translate ``math.frexp`` (a tuple-returning call), so this is the
corpus kernel of the LLM backend: ``numba2cuda translate kernels/exponent_histogram.py
--backend llm`` asks a model for the kernel body, and writes it only once it is verified
against this module's example().  The tests replay a recorded answer (tests/llm_cache).

Launch:  ``exponent_histogram[math.ceil(n / 128), 128](x, mantissa, hist)``
"""
import math

import numpy as np
from numba import cuda

THREADS = 128
EMIN = -24  # exponent of the first bin: |x| < 2**-24 counts there
NBINS = 48  # exponents EMIN .. EMIN + NBINS - 1 (|x| up to 2**24)


@cuda.jit("void(float32[::1], float32[::1], int32[::1])")
def exponent_histogram(x, mantissa, hist):
    i = cuda.grid(1)
    if i < x.shape[0]:
        m, e = math.frexp(x[i])
        mantissa[i] = m
        b = min(max(e - EMIN, 0), NBINS - 1)
        cuda.atomic.add(hist, b, 1)


def reference(x):
    """NumPy reference: (mantissas, histogram)."""
    m, e = np.frexp(x)
    bins = np.clip(e.astype(np.int64) - EMIN, 0, NBINS - 1)
    return m.astype(np.float32), np.bincount(bins, minlength=NBINS).astype(np.int32)


# The sizes `numba2cuda verify` sweeps: n values (block-1, block+1, primes, 1).
VERIFY_SIZES = ("small", 1, THREADS - 1, THREADS + 1, 67, 97)


def example(rng, size="small"):
    """One run: inputs, launch configuration and the expected outputs.

    size: "small" (1000 values), "bench" (2**24) or an int n (n values).  Values span 2**-30 to
    2**30 in magnitude, both signs, with some zeros, so the clamped end bins are used too.
    """
    n = {"small": 1000, "bench": 1 << 24}[size] if isinstance(size, str) else int(size)
    magnitude = np.exp2(rng.uniform(-30, 30, n))
    x = (rng.choice([-1.0, 1.0], n) * magnitude).astype(np.float32)
    x[rng.random(n) < 0.05] = 0.0
    mantissa = np.zeros(n, dtype=np.float32)
    hist = np.zeros(NBINS, dtype=np.int32)  # accumulated into: inout
    expected_m, expected_hist = reference(x)
    return dict(kernel=exponent_histogram, griddim=math.ceil(n / THREADS), blockdim=THREADS, shared=0,
                args=[x, mantissa, hist], expected={1: expected_m, 2: expected_hist}, inout={2},
                rtol=0, atol=0)
