# expect: 10:15: f-string: strings exist only as print() arguments
"""Debug print with an f-string."""
from numba import cuda


@cuda.jit("void(float32[::1])")
def show(x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        print(f"x[{i}] = {x[i]}")
