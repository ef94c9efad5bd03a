# expect: 17:14: array attribute .twice_first: the module adds it to arrays with numba.extending's overload_method (line 8), which numba2cuda does not translate
"""numba-cuda's overload_method tests: a method added to arrays. It was "only .shape, .size, .ndim, .dtype and .T
are supported", which did not say where the method comes from."""
from numba import cuda, types
from numba.cuda.extending import overload_method


@overload_method(types.Array, "twice_first")
def _twice_first(arr):
    def impl(arr):
        return 2 * arr[0]
    return impl


@cuda.jit("void(int64[::1], int64[::1])")
def k(a, out):
    out[0] = a.twice_first()
