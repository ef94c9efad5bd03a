# expect: 13:11: function 'cuda.atomic.add' used as a value: it can be called here, not passed or kept
"""Passes cuda.atomic.add to a device function (Numba's atomics tests do), which numba2cuda does not specialise."""
from numba import cuda


@cuda.jit(device=True)
def apply(op, ary, i):
    op(ary, i, 1.0)


@cuda.jit("void(float64[::1])")
def bump(ary):
    apply(cuda.atomic.add, ary, cuda.threadIdx.x)
