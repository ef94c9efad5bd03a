# expect: 11:13: 'acc' used before assignment
"""Forgets to set the accumulator to zero before the loop."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[::1])")
def row_sum(m, out):
    i = cuda.grid(1)
    if i < m.shape[0]:
        for j in range(m.shape[1]):
            acc += m[i, j]
        out[i] = acc
