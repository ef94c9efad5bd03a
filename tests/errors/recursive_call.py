# expect: 10:16: recursive call to 'factorial': CUDA C device functions here cannot recurse
"""A recursive device function."""
from numba import cuda


@cuda.jit("int64(int64)", device=True)
def factorial(n):
    if n <= 1:
        return 1
    return n * factorial(n - 1)


@cuda.jit("void(int64[::1])")
def factorials(out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = factorial(i)
