# expect: 7:14: syntax error: duplicate argument 'a' in function definition
"""Two parameters of one name: Python's compiler (not its parser) rejects the module, and so does numba2cuda."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def twice(a, a):
    a[0] = 1.0
