# expect: 11:16: recursive call to 'factorial': numba2cuda translates a device function that calls itself when a signature gives its result type, and here its result type is known only from its own result
# expect: 18:12: recursive call to 'is_even': numba2cuda translates a device function that calls itself when a signature gives its result type, and here it calls a function that calls it back
"""A recursive device function Numba types from its base case, and two that call each other."""
from numba import cuda


@cuda.jit(device=True)
def factorial(n):
    if n <= 1:
        return 1
    return n * factorial(n - 1)


@cuda.jit("boolean(int64)", device=True)
def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


@cuda.jit("boolean(int64)", device=True)
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


@cuda.jit("void(int64[::1])")
def factorials(out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = factorial(i)


@cuda.jit("void(int64[::1])")
def parities(out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = is_even(i)
