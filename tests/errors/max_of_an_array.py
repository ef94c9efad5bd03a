# expect: 10:18: max(): takes two or more numbers
"""Takes the maximum of a whole row with the max builtin."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[::1])")
def row_max(m, out):
    i = cuda.grid(1)
    if i < m.shape[0]:
        out[i] = max(m[i])
