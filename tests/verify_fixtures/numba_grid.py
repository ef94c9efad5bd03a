"""`numba.cuda.grid(1)` after `import numba` (the simulator's fake cuda module is swapped in for `cuda` only)."""
import numba
import numpy as np
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def twice(x, out):
    i = numba.cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] * np.float32(2)


def example(rng, size="small"):
    x = rng.standard_normal(100).astype(np.float32)
    return dict(kernel=twice, griddim=1, blockdim=128, shared=0, args=[x, np.zeros_like(x)], expected={1: 2 * x})
