"""Kernels whose original is or is not deterministic: many threads setting one flag to the same value (not a race
to report), every thread storing its own value into one element (a real race), and a stream compaction whose
output order is the order threads ran in. Where the original is not deterministic, verify cannot decide."""
import numpy as np
from numba import cuda


@cuda.jit("void(float32[::1], int32[::1])")
def any_negative(x, found):
    i = cuda.grid(1)
    if i < x.shape[0] and x[i] < 0:
        found[0] = 1


@cuda.jit("void(float32[::1], float32[::1])")
def last_writer(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[0] = x[i]


def example_any_negative(rng, size="small"):
    x = rng.standard_normal(200).astype(np.float32)
    return dict(kernel=any_negative, griddim=2, blockdim=128, shared=0, args=[x, np.zeros(1, np.int32)],
                expected={1: np.array([1], np.int32)}, inout={1})


def example_last_writer(rng, size="small"):
    x = rng.standard_normal(200).astype(np.float32)
    return dict(kernel=last_writer, griddim=2, blockdim=128, shared=0, args=[x, np.zeros(1, np.float32)],
                expected={1: None})


@cuda.jit("void(float32[::1], float32[::1], int32[::1])")
def compact(x, out, count):
    """Stream compaction through an atomic counter: the order of `out` is the order threads ran in."""
    i = cuda.grid(1)
    if i < x.shape[0] and x[i] > 0:
        k = cuda.atomic.add(count, 0, 1)
        out[k] = x[i]


def example_compact(rng, size="small"):
    x = rng.standard_normal(200).astype(np.float32)
    return dict(kernel=compact, griddim=2, blockdim=128, shared=0,
                args=[x, np.zeros(200, np.float32), np.zeros(1, np.int32)], expected={})
