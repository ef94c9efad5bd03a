"""Tuple parameters, as real code passes them (an array's .shape, a pair of scales): one typed by its signature,
one by --types (NUMBA2CUDA_TYPES here); a mutant that reads the wrong item must be rejected."""
import numpy as np
from numba import cuda

NUMBA2CUDA_TYPES = {"stencil": "src=float64[:, ::1], dst=float64[:, ::1], shape=UniTuple(int64, 2)"}


@cuda.jit("void(float32[:, ::1], UniTuple(int64, 2), Tuple((float64, int32)))")
def fill(out, shape, scale):
    i, j = cuda.grid(2)
    if i < shape[0] and j < shape[1]:
        out[i, j] = (i * shape[1] + j) * scale[0] + scale[1]


@cuda.jit
def stencil(src, dst, shape):
    rows, cols = shape
    i, j = cuda.grid(2)
    if 0 < i < rows - 1 and 0 < j < cols - 1:
        dst[i, j] = src[i - 1, j] + src[i + 1, j] + src[i, j - 1] + src[i, j + 1] - 4.0 * src[i, j]


def example_fill(rng, size="small"):
    out = np.zeros((13, 21), np.float32)
    return dict(kernel=fill, griddim=(4, 6), blockdim=(4, 4), shared=0, args=[out, out.shape, (0.25, 3)],
                expected={})


def example_stencil(rng, size="small"):
    src = rng.standard_normal((17, 30))
    return dict(kernel=stencil, griddim=(3, 4), blockdim=(8, 8), shared=0, args=[src, np.zeros_like(src), src.shape],
                expected={})
