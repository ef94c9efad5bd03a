"""`numba.cuda.grid(1)`, `numba.cuda.blockDim.x` ... after `import numba` (the simulator's fake cuda module is
swapped in for `cuda` only; gridDim and blockDim are set on each launch's module, not its class)."""
import numba
import numpy as np
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def twice(x, out):
    i = numba.cuda.grid(1)
    j = numba.cuda.blockIdx.x * numba.cuda.blockDim.x + numba.cuda.threadIdx.x
    if i < x.shape[0]:
        out[i] = x[i] * np.float32(2) + (j - i) + numba.cuda.gridDim.x


def example(rng, size="small"):
    x = rng.standard_normal(100).astype(np.float32)
    return dict(kernel=twice, griddim=2, blockdim=64, shared=0, args=[x, np.zeros_like(x)],
                expected={1: 2 * x + np.float32(2)})
