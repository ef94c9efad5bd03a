"""Two kernels, one example each (example_<kernel>): one writes only the diagonal of its output, the other updates
its array in place; neither declares anything for verify."""
import numpy as np
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[:, ::1])")
def diagonal(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i, i] = a[i, i] * 2.0 + 1.0


@cuda.jit("void(float32[::1], float32)")
def leaky_relu(x, slope):
    i = cuda.grid(1)
    if i < x.shape[0] and x[i] < 0:
        x[i] = x[i] * slope


def example_diagonal(rng, size="small"):
    a = rng.standard_normal((40, 40)).astype(np.float32)
    return dict(kernel=diagonal, griddim=1, blockdim=64, shared=0, args=[a, np.zeros_like(a)], expected={})


def example_leaky_relu(rng, size="small"):
    x = rng.standard_normal(300).astype(np.float32)
    return dict(kernel=leaky_relu, griddim=3, blockdim=128, shared=0, args=[x, np.float32(0.01)], expected={})
