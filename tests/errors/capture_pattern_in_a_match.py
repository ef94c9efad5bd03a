# expect: 12:14: capture pattern in a match: numba2cuda translates value patterns (case 0:, case Op.ADD:, case 1 | 2:) and case _
"""Names the subject in a case (`case n if n > 2`): Numba compiles it, numba2cuda translates value patterns only."""
from numba import cuda


@cuda.jit("void(int64[::1], int64[::1])")
def bucket(x, out):
    i = cuda.grid(1)
    match x[i]:
        case 0 | 1:
            out[i] = 0
        case n if n > 2:
            out[i] = n
