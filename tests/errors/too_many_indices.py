# expect: 10:21: too many indices: 'v' has 1 dimension(s)
"""Indexes a 1-D array with two indices."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[:, ::1])")
def outer(v, out):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = v[i, j] * v[j]
