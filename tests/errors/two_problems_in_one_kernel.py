# expect: 12:13: del statement: kernel variables cannot be deleted
# expect: 13:15: f-string: strings exist only as print() arguments
"""Two unrelated mistakes in one kernel: both must be reported in one run."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def normalise(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        if x[i] < 0:
            del i
        print(f"normalising {i}")
        out[i] = x[i] / 2
