# expect: 6:11: signature: 'UniTuple(float32[::1], 2)': a tuple type here holds one or more numbers, not arrays or tuples
"""Passes two arrays to the kernel as one tuple (a tuple of numbers is fine; of arrays it is not)."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], UniTuple(float32[::1], 2))")
def shift(points, columns):
    i = cuda.grid(1)
    if i < points.shape[0]:
        points[i, 0] += columns[0][i]
