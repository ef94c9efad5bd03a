"""Discrete Fourier transform of a complex64 signal, one output frequency per thread, with cmath.

X[k] = sum over t of x[t] * exp(-2 pi i k t / n). Each thread walks the whole signal, turning each term's
twiddle factor into a complex64 with ``cmath.rect(1, angle)`` (the angle is reduced modulo n first, so it
stays small and float32 keeps it exact enough), and accumulates in complex64, as a complex64 Numba kernel
does. It also writes the magnitude (``abs``) and the phase (``cmath.phase``) of each frequency.

O(n^2) work, so this is the textbook kernel, not an FFT; its point is complex arithmetic in a kernel.

Launch:  ``dft[ceil(n / 128), 128](x, spectrum, magnitude, phase)``
"""
import cmath
import math

import numpy as np
from numba import cuda, float32

THREADS = 128


@cuda.jit("void(complex64[::1], complex64[::1], float32[::1], float32[::1])")
def dft(x, spectrum, magnitude, phase):
    k = cuda.grid(1)
    n = x.shape[0]
    if k < n:
        step = float32(-2.0 * math.pi / n)
        acc = np.complex64(0)
        for t in range(n):
            twiddle = cmath.rect(float32(1.0), step * float32((k * t) % n))
            acc += x[t] * twiddle
        spectrum[k] = acc
        magnitude[k] = abs(acc)
        phase[k] = cmath.phase(acc)


def reference(x):
    """NumPy: (spectrum, magnitude, phase) from the same float32 twiddle factors, summed in complex128.

    The kernel sums in complex64 and its sin/cos are the GPU's: the tolerance in example() covers both."""
    n = len(x)
    k = np.arange(n)
    step = np.float32(-2.0 * math.pi / n)
    angle = step * ((np.outer(k, k) % n).astype(np.float32))
    twiddle = np.cos(angle).astype(np.complex128) + 1j * np.sin(angle)
    spectrum = (twiddle @ x.astype(np.complex128)).astype(np.complex64)
    return spectrum, np.abs(spectrum).astype(np.float32), np.angle(spectrum).astype(np.float32)


# The sizes `numba2cuda verify` sweeps: a partial last block, one frequency, primes.
VERIFY_SIZES = ("small", 1, THREADS - 1, THREADS + 1, 67)

# "bench": 16384 samples (2.7e8 complex multiply-adds); "medium": 2048.
BENCH_SIZES = ("bench", "medium")


def example(rng, size="small"):
    """One run: inputs, launch configuration and the expected outputs.

    size: "small" (200 samples), "medium" (2048), "bench" (16384) or an int n (n samples).
    """
    n = {"small": 200, "medium": 2048, "bench": 16384}[size] if isinstance(size, str) else int(size)
    x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    spectrum = np.zeros(n, np.complex64)
    magnitude, phase = np.zeros(n, np.float32), np.zeros(n, np.float32)
    es, em, ep = reference(x)
    # float32 sums of n terms of size ~1: an absolute error ~ n * 2**-24 * sqrt(n) (the phase's error is
    # that over the magnitude, itself ~ sqrt(n))
    tol = 4e-7 * n * math.sqrt(n) + 1e-5
    return dict(kernel=dft, griddim=math.ceil(n / THREADS), blockdim=THREADS, shared=0,
                args=[x, spectrum, magnitude, phase], expected={1: es, 2: em, 3: ep},
                rtol=1e-4, atol=tol, flops=8 * n * n, bytes=x.nbytes * (n // THREADS + 1))
