"""Two kernels about races in the original: many threads setting one flag to the same value (deterministic on a
GPU: not a race to report), and every thread storing its own value into one element (a real race: the original
itself is nondeterministic, so verify cannot decide)."""
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
