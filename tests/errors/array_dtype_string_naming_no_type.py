# expect: 8:37: array dtype "int33": is no NumPy dtype of numbers, which numba-cuda reads a dtype string as (np.dtype(...); its typing fails: 'Invalid NumPy dtype specified')
"""A shared array whose dtype string names no dtype: numba-cuda reads "int33" with np.dtype, which refuses it."""
from numba import cuda


@cuda.jit("void(int32[::1])")
def f(x):
    s = cuda.shared.array(10, dtype="int33")
    s[0] = x[0]
    x[0] = s[0]
