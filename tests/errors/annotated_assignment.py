# expect: 10:9: annotated assignment: local variable annotations are not supported
"""Declares the accumulator's type with an annotation."""
from numba import cuda, float32


@cuda.jit("void(float32[:, ::1], float32[::1])")
def row_sum(m, out):
    i = cuda.grid(1)
    if i < m.shape[0]:
        acc: float32 = 0.0
        for j in range(m.shape[1]):
            acc += m[i, j]
        out[i] = acc
