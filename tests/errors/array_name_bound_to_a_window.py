# expect: 9:5: 'w' bound to a window: a name bound to several arrays is a pointer with extents, and a window's rows lie further apart than its extents say
"""Picks one of two 2x2 windows of a matrix by a branch: the name would lose the rows' spacing."""
from numba import cuda


@cuda.jit("void(int64[:, ::1], int64[::1])")
def corner(a, out):
    i = cuda.grid(1)
    w = a[0:2, 0:2]
    if i > 0:
        w = a[1:3, 1:3]
    out[i] = w[1, 1]
