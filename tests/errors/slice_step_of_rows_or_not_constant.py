# expect: 9:16: slice step: a step other than 1 slices a 1-D array or view here
# expect: 12:25: slice step: a step other than 1 must be a nonzero integer constant here
"""Takes every other row of a matrix, and every s-th element of a row (s known only when the kernel runs)."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], int64, float32[::1])")
def evens(m, s, out):
    rows = m[::2, :]
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = m[i, ::s][0] + rows[i, 0]
