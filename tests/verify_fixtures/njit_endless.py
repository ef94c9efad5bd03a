"""A count from the input bounds a loop in an @njit helper: with a count near int64's limit (verify's integer
edges) the Numba original never ends. In the simulator the helper runs compiled, outside the loop deadline
the simulator's Python gets; on the GPU a kernel cannot be stopped at all. verify must drop such a case (the
original's process is ended and resumed after it), never hang. Two kernels, so that a run is resumed twice."""
import numpy as np
from numba import cuda, njit


@njit
def mix(n):
    h = 1
    for k in range(n):
        h = h * 6364136223846793005 + k  # wraps: no closed form a compiler could fold the loop into
    return h


@cuda.jit("void(int64[::1], int64[::1])")
def hashes(ns, out):
    i = cuda.grid(1)
    if i < ns.shape[0]:
        out[i] = mix(ns[i])


@cuda.jit("void(int64[::1], int64[::1])")
def offsets(ns, out):
    i = cuda.grid(1)
    if i < ns.shape[0]:
        out[i] = mix(ns[i] + 1) - i


def example_hashes(rng, size="small"):
    ns = rng.integers(0, 40, 50)
    return dict(kernel=hashes, griddim=1, blockdim=64, shared=0, args=[ns, np.zeros(50, np.int64)],
                expected={1: None})


def example_offsets(rng, size="small"):
    ns = rng.integers(0, 40, 30)
    return dict(kernel=offsets, griddim=1, blockdim=32, shared=0, args=[ns, np.zeros(30, np.int64)],
                expected={1: None})
