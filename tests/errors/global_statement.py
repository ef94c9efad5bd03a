# expect: 10:5: global statement: kernels cannot rebind module globals
"""Counts calls in a module global."""
from numba import cuda

calls = 0


@cuda.jit("void(float32[::1])")
def touch(x):
    global calls
    calls += 1
    x[0] = 0.0
