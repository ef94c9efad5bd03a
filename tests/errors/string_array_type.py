# expect: 8:30: NUMBA2CUDA_TYPES: a: unknown type 'UnicodeCharSeq(1)[:]' (Numba's string types
"""Compares two DNA sequences given as NumPy character arrays (np.array(list("ACGT")), dtype '<U1'), which Numba
types UnicodeCharSeq(1): a string type numba2cuda does not translate; their codes (a.view(np.uint32)) it does."""
import numpy as np
from numba import cuda


NUMBA2CUDA_TYPES = {"match": "a=UnicodeCharSeq(1)[:], b=UnicodeCharSeq(1)[:], out=int32[:]"}


@cuda.jit
def match(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 1 if a[i] == b[i] else 0
