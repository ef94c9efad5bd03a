# expect: 16:12: 'b' used where it may be None: it holds the result of a function that returns None on some paths: Numba raises where such a None is used, which the translation reproduces (the thread stops) only for a kernel's statement that uses it whenever it runs
"""In a device function, Numba's exception leaves the kernel too; a C return would leave only the function."""
from numba import cuda


@cuda.jit(device=True)
def pick(v, n):
    if v < 0:
        return None
    return int(v) % n


@cuda.jit(device=True)
def twice(v, n):
    b = pick(v, n)
    return b * 2


@cuda.jit("void(float64[::1], int64[::1])")
def count(vals, out):
    i = cuda.grid(1)
    out[i] = twice(vals[i], 8)
