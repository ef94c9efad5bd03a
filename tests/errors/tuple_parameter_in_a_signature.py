# expect: 6:11: signature: 'UniTuple(float32, 3)': tuple parameters are not supported
"""Passes a 3-vector to the kernel as a tuple."""
from numba import cuda


@cuda.jit("void(float32[:, ::1], UniTuple(float32, 3))")
def shift(points, offset):
    i = cuda.grid(1)
    if i < points.shape[0]:
        points[i, 0] += offset[0]
