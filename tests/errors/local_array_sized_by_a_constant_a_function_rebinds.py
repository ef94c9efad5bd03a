# expect: 13:38: cuda.local.array() shape: dimensions must be positive, and 'NBANDS' is 0 here: setup() rebinds it (global NBANDS)
"""Sizes a local array by a module value that setup() sets before the first launch (a land-cover classifier's
band count): Numba compiles the value it holds then; the module says 0."""
from numba import cuda, float64

NBANDS = 0


@cuda.jit("void(float64[:, ::1], float64[::1])")
def band_sum(img, out):
    i = cuda.grid(1)
    if i < img.shape[0]:
        tmp = cuda.local.array(shape=NBANDS, dtype=float64)
        for q in range(NBANDS):
            tmp[q] = img[i, q]
        out[i] = tmp[0]


def setup(n):
    global NBANDS
    NBANDS = n
