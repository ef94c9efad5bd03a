# expect: 13:16: builtin 'sum' used as a value: 'sum' is Python's builtin function, not a number
"""Stores a row's total, but names the builtin `sum` where it meant its own variable (a sparse matrix-vector
kernel's last line); Numba's typing refuses the function as a value too."""
from numba import cuda


@cuda.jit("void(float32[::1], float32[::1])")
def rows(x, y):
    i = cuda.grid(1)
    if i < y.size:
        total = x[i] * 2.0
        x[i] = total
        y[i] = sum
