# expect: ?
"""The accumulator is only initialised on one branch."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[::1])")
def row_max(m, out):
    i = cuda.grid(1)
    if i < m.shape[0]:
        for j in range(m.shape[1]):
            if j == 0:
                best = m[i, 0]
            best = max(best, m[i, j])
        out[i] = best
    out[0] = result
