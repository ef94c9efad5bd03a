# expect: 9:14: for loop over prange: numba-cuda cannot type prange in a kernel (its typing fails: "Untyped global name 'prange'"); each thread runs the loop itself
"""A kernel loops with numba.prange, which only the CPU target's parallel=True reads as a parallel loop."""
from numba import cuda, prange


@cuda.jit("void(float32[::1])")
def bump(x):
    i = cuda.grid(1)
    for p in prange(3):
        x[i] += p
