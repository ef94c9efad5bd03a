# expect: 10:18: array method .cumsum(): numba2cuda translates an array's reductions (.sum(), .mean() ...) and no other method
"""Calls an array method NumPy has and numba2cuda does not translate."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[::1])")
def row_sum(m, out):
    i = cuda.grid(1)
    if i < m.shape[0]:
        out[i] = m[i].cumsum()[0]
