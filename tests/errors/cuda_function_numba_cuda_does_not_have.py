# expect: 10:9: call to cuda.printf(): numba.cuda has no 'printf': Numba raises AttributeError when it compiles the kernel
"""Prints with CUDA C's spelling: numba.cuda has no printf (a parquet decoder's debugging lines); print() is it."""
from numba import cuda


@cuda.jit("void(int64[::1])")
def scatter(offsets):
    i = cuda.grid(1)
    if i == 0:
        cuda.printf("first offset %d\n", offsets[0])
