# expect: 7:11: signature: CPointer of unknown type 'managed_string' (numba2cuda knows Numba's own types, not those a library adds to Numba)
"""Frees an array of a string type a dataframe library registers with Numba (an extension type)."""
from numba import cuda
from numba.core.types import CPointer, void


@cuda.jit("void(CPointer(managed_string), int64)")
def free_strings(strings, n):
    i = cuda.grid(1)
    if i < n:
        pass
