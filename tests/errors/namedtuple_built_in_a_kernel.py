# expect: 18:9: call to Pair(): 'Pair' is a namedtuple class (a, b); numba2cuda reads a namedtuple a kernel is given, but does not build one in a kernel
"""A gene-expression clusterer builds a namedtuple of work arrays in its kernel: the message said 'computed when the
module runs' (and, imported, 'a plain Python function'), neither of which is what stops the translation."""
from collections import namedtuple

from numba import cuda

Pair = namedtuple("Pair", ["a", "b"])


@cuda.jit(device=True)
def total(p):
    return p.a + p.b


@cuda.jit("void(float64[::1], float64[::1], float64[::1])")
def use_pair(xa, xb, out):
    p = Pair(a=xa[0], b=xb[0])
    out[0] = total(p)
