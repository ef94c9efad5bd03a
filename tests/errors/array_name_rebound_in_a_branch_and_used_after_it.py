# expect: 9:9: 'a' assigned more than once: names of arrays, views and tuples must be assigned exactly once
"""After the if, `a` is the view or the parameter, depending on the branch taken: one name, two arrays."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def tail(a, out):
    if out[0] > 0:
        a = a[1:]
    out[1] = a[0]
