# expect: 19:14: array attribute .scaled_first: the module adds it to arrays with numba.extending's overload_method (line 9), which numba2cuda does not translate
"""numba-cuda's overload_method tests: a method added to arrays whose implementation depends on the argument
types (one that returns one implementation whatever the types is translated). It was "only .shape, .size, .ndim,
.dtype and .T are supported", which did not say where the method comes from."""
from numba import cuda, types
from numba.cuda.extending import overload_method


@overload_method(types.Array, "scaled_first")
def _scaled_first(arr, k):
    if isinstance(k, types.Integer):
        def impl(arr, k):
            return k * arr[0]
        return impl


@cuda.jit("void(int64[::1], int64[::1])")
def k(a, out):
    out[0] = a.scaled_first(2)
