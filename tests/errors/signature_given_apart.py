# expect: 6:11: signature: cuda.jit takes one signature; 'void, int32[::1]' gives it the result type and the argument types apart
"""numba-cuda's CUDA array interface docs write the signature so; cuda.jit's second argument is device=."""
from numba import cuda, int32, void


@cuda.jit(void, int32[::1])
def initialize_array(x):
    i = cuda.grid(1)
    if i < len(x):
        x[i] = i
