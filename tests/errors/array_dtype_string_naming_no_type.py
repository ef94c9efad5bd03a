# expect: 8:37: array dtype "int33": names no number type of numba.types, which numba-cuda looks a dtype string up in (its typing fails: 'Invalid NumPy dtype specified')
"""A shared array whose dtype string names no type: numba-cuda looks "int33" up in numba.types and fails."""
from numba import cuda


@cuda.jit("void(int32[::1])")
def f(x):
    s = cuda.shared.array(10, dtype="int33")
    s[0] = x[0]
    x[0] = s[0]
