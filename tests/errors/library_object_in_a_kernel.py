# expect: 9:14: 'Color.red': is numba.cuda.tests.cudapy.enum_usecases.Color.red, which numba2cuda does not translate in kernels (it translates numbers, arrays and the cuda, math and numpy names README 'Supported kernel language' lists; not an Enum member or a library's object)
"""Compares with an Enum member of numba-cuda's test use cases: named as written and as imported, rather than as
'cuda.tests...', and the hint says to pass its value (was: a hint listing functions)."""
from numba import cuda
from numba.cuda.tests.cudapy.enum_usecases import Color

@cuda.jit("void(int64[::1], int64)")
def is_red(out, c):
    out[0] = Color.red == c
