# expect: 9:18: 'm[1:3, 1:3].T' (.T of a window or strided view): numba2cuda transposes whole 2-D arrays (read column-major); not a window, a strided view or an array of more dimensions
"""Transposes a window of a matrix: numba2cuda reads whole arrays the other way round, not windows."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[::1])")
def corner(m, out):
    if cuda.grid(1) == 0:
        out[0] = m[1:3, 1:3].T[0, 1]
