# expect: 8:11: signature: record field 'pos' has the type 'Record(x[type=float32;offset=0],y[type=float32;offset=4];8;False)', which numba2cuda does not translate inside a record (numbers, booleans, complex numbers and fixed-shape arrays of them are); pass that field as an array of its own
"""A record nested in a record (a particle whose position is itself a record): Numba types it, numba2cuda lays out
records of numbers, booleans, complex numbers and fixed-shape arrays of them only."""
from numba import cuda


# the import mode reads this signature from the dispatcher; written out, it is Numba's spelling
@cuda.jit("void(Record(pos[type=Record(x[type=float32;offset=0],"
          "y[type=float32;offset=4];8;False);offset=0],m[type=float64;offset=8];16;False)[:])")
def shift(a):
    i = cuda.grid(1)
    a[i].m = a[i].m * 2.0
