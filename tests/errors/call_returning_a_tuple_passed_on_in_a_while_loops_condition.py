# expect: 20:15: argument scaled(0.5, p): a call returning a tuple, passed on where it may not run
"""Halves a point while its halved length is large, the halving written inside the while loop's test."""
from numba import cuda


@cuda.jit(device=True)
def scaled(a, v):
    return a * v[0], a * v[1]


@cuda.jit(device=True)
def dot(u, v):
    return u[0] * v[0] + u[1] * v[1]


@cuda.jit("void(float64[:, ::1])")
def shrink(pts):
    i = cuda.grid(1)
    p = (pts[i, 0], pts[i, 1])
    while dot(scaled(0.5, p), p) > 1.0:
        p = scaled(0.5, p)
    pts[i, 0], pts[i, 1] = p
