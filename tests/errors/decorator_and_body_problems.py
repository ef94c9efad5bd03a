# expect: 7:57: @cuda.jit option 'fast_math': numba-cuda has no such option: compiling the kernel raises TypeError (unexpected keyword argument 'fast_math'), so Numba refuses it too
# expect: 18:9: try statement: kernels cannot handle exceptions
"""A bad decorator on one kernel and a bad statement in the other: both must be reported."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])", fast_math=True)
def copy(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i]


@cuda.jit("void(float32[::1], float32[::1])")
def safe_inverse(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        try:
            out[i] = 1.0 / x[i]
        except ZeroDivisionError:
            out[i] = 0.0
