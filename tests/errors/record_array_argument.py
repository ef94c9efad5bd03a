# expect: 8:11: signature: cannot read signature 'void(Record(a[type=int32;offset=0],b[type=float64;offset=8];16;True)[:])' (a record: an element of a structured dtype, which numba2cuda does not translate; pass each field as an array of its own)
"""Copies one field of a structured array into another (numba-cuda's alignment test): the record type, as Numba
spells it, is said to be a record, not a library's type."""
from numba import cuda


# the import mode reads this signature from the dispatcher; written out, it is Numba's spelling
@cuda.jit("void(Record(a[type=int32;offset=0],b[type=float64;offset=8];16;True)[:])")
def copy_field(a):
    i = cuda.grid(1)
    a[i].a = a[i].b
