# expect: 11:18: max() of one argument: takes a tuple or a 1-D array of real numbers
"""Takes the maximum of a whole matrix with the max builtin: numba-cuda iterates a 2-D array by rows, which it
cannot compare (a 1-D array, `max(m[i])`, is its iterable_max, translated)."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], float32[::1])")
def all_max(m, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = max(m)
