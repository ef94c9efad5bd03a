# expect: 9:12: string: strings exist only as print() arguments, and as a local's values only compared with == or != (a tag of up to 8 bytes)
"""Tags a hit with a word longer than 8 bytes: numba2cuda numbers a tag by its bytes, at most 8 of them."""
from numba import cuda


@cuda.jit("void(float32[::1], int32[::1])")
def classify(x, out):
    i = cuda.grid(1)
    kind = "background"
    if x[i] > 0.5:
        kind = "edge"
    if kind == "edge":
        out[i] = 1
