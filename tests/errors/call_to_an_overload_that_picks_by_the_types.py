# expect: 23:16: call to clipped(): 'clipped' is implemented by numba.extending's overload (line 13), and 'ol_clipped' picks its implementation by the arguments' types when Numba compiles the call; numba2cuda reads an overload that returns one implementation whatever the types
"""An @overload whose implementation depends on the argument types (numba-cuda's extension tests): numba2cuda would
have to run it; before, the call was "a plain Python function ... Numba cannot call it", which was false."""
from numba import cuda, types
from numba.extending import overload


def clipped(x):
    return x


@overload(clipped)
def ol_clipped(x):
    if isinstance(x, types.Integer):
        return lambda x: max(x, 0)
    return lambda x: min(max(x, 0.0), 1.0)


@cuda.jit("void(float64[::1])")
def k(a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = clipped(a[i])
