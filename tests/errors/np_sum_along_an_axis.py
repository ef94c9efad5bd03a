# expect: 11:18: np.sum(): numba2cuda reduces a whole array: one argument, no axis= or dtype=
"""Normalises each column by the column sums, calling np.sum along an axis."""
from numba import cuda
import numpy as np


@cuda.jit("void(float32[:, ::1], float32[:, ::1])")
def normalise_columns(m, out):
    i = cuda.grid(1)
    if i < m.shape[0]:
        totals = np.sum(m, axis=0)
        for j in range(m.shape[1]):
            out[i, j] = m[i, j] / totals[j]
