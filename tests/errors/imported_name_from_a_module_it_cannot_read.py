# expect: 10:14: imported name 'MAX_WBITS': 'MAX_WBITS' comes from zlib, which numba2cuda cannot read without running it
"""Reads a constant of an installed module (zlib's), whose value only importing it gives."""
from numba import cuda

from zlib import MAX_WBITS


@cuda.jit("void(int64[::1])")
def window_bits(out):
    out[0] = MAX_WBITS
