# expect: 11:9: nonlocal statement: kernels cannot rebind outer variables
"""A kernel that counts into a closure variable: Numba cannot either (a read-only nonlocal is translated)."""
from numba import cuda


def build():
    hits = 0

    @cuda.jit("void(float64[::1])")
    def count(a):
        nonlocal hits
        hits += 1
        a[0] = hits
    return count
