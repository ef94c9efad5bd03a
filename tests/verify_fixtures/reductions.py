"""NumPy's reductions of whole arrays in kernels, as numba-cuda's arraymath computes them (element by element in
C order, in its accumulator type): per row of a float32 matrix (np.sum and a.mean() of a view, np.std, np.nansum
past NaNs, np.argmax and a.argmin() stopping at the first NaN), of a C-contiguous int32 matrix whole (a.sum() in
int64, np.prod of a row, np.count_nonzero, np.argmax), of bools (np.all, np.any), and a literal_unroll over a
tuple of constant arrays of several lengths (numba-cuda's reduction tests), whose NaN and inf go through
np.nanmean, np.var and np.nanstd; and Python's sum() of an array and of a tuple, which numba-cuda adds from an
int 0 (float32 elements in float64)."""
import math

import numpy as np
from numba import cuda
from numba.cuda.misc.special import literal_unroll

SAMPLES = (np.float64([1.0, 2.0, 0.0, -0.0, 1.0, -1.5]), np.float64([-0.0, -1.5]),
           np.float64([-1.5, 2.5, np.inf]), np.float64([np.nan, -1.5, 2.5, np.nan, 3.0, 0.25, 7.0, 1.5, 2.0]))


@cuda.jit("void(float32[:, ::1], float64[:, ::1])")
def row_stats(m, out):
    i = cuda.grid(1)
    if i < m.shape[0]:
        row = m[i]
        out[i, 0] = np.sum(row)
        out[i, 1] = row.mean()
        out[i, 2] = np.std(m[i, 1:])
        out[i, 3] = np.nansum(row) + np.count_nonzero(row)
        out[i, 4] = np.var(row[::2])
        out[i, 5] = np.argmax(row) * 100 + row.argmin()


@cuda.jit("void(int32[:, ::1], bool_[:, ::1], int64[::1])")
def totals(m, flags, out):
    i = cuda.grid(1)
    if i == 0:
        out[0] = m.sum()
        out[1] = np.prod(m[1])
        out[2] = np.count_nonzero(m)
        out[3] = np.all(flags[0]) * 10 + np.any(flags[1])
        out[4] = m[2, 1:].sum() - np.prod(m[0, :3])
        out[5] = np.argmax(m) * 100 + m[1].argmin()


@cuda.jit("void(float64[::1])")
def unrolled(out):
    if cuda.grid(1) == 0:
        k = 0
        for arr in literal_unroll(SAMPLES):
            out[k] = np.nanmean(arr) + np.var(arr[1:]) + np.nansum(arr) + np.nanstd(arr)
            k += 1


@cuda.jit("void(float32[:, ::1], int16[::1], float64[:, ::1])")
def builtin_sums(m, counts, out):
    i = cuda.grid(1)
    if i < m.shape[0]:
        out[i, 0] = sum(m[i])
        out[i, 1] = sum(counts) + sum((m[i, 0], 2, 0.5))


def example_builtin_sums(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    m = rng.uniform(-1.0, 1.0, (n, 13)).astype(np.float32)
    counts = rng.integers(-100, 100, 7).astype(np.int16)
    want = np.zeros((n, 2))
    for i in range(n):
        want[i] = _numba_sum(m[i], np.float64), int(counts.astype(np.int64).sum()) + (float(m[i, 0]) + 2 + 0.5)
    return dict(kernel=builtin_sums, griddim=math.ceil(n / 32), blockdim=32, args=[m, counts, np.zeros((n, 2))],
                expected={2: want}, rtol=1e-12)


def _numba_sum(values, acc):
    c = acc(0)
    for v in values:
        c = acc(c + acc(v))
    return c


def _numba_var(values):
    m = np.float64(_numba_sum(values, np.float64)) / len(values)
    return sum((np.float64(v) - m) ** 2 for v in values) / len(values)


def example_row_stats(rng, size="small"):
    n = {"small": 40}.get(size, size) if isinstance(size, str) else int(size)
    m = rng.uniform(-1.0, 1.0, (n, 13)).astype(np.float32)
    m[::5, 3] = np.nan
    want = np.zeros((n, 6))
    for i in range(n):
        row = m[i]
        mean = np.float64(_numba_sum(row, np.float32)) / row.size
        nansum = _numba_sum(row[~np.isnan(row)], np.float32)
        want[i] = (_numba_sum(row, np.float32), mean, _numba_var(row[1:]) ** 0.5,
                   np.float64(nansum) + np.count_nonzero(row), _numba_var(row[::2]),
                   np.argmax(row) * 100 + np.argmin(row))
    return dict(kernel=row_stats, griddim=math.ceil(n / 32), blockdim=32, args=[m, np.zeros((n, 6))],
                expected={1: want}, rtol=1e-9, atol=1e-12)


def example_totals(rng, size="small"):
    m = rng.integers(-3, 4, (4, 6)).astype(np.int32)
    flags = rng.integers(0, 2, (2, 5)).astype(bool)
    want = [int(m.astype(np.int64).sum()), int(np.prod(m[1].astype(np.int64))), int(np.count_nonzero(m)),
            int(flags[0].all()) * 10 + int(flags[1].any()),
            int(m[2, 1:].astype(np.int64).sum() - np.prod(m[0, :3].astype(np.int64))),
            int(np.argmax(m)) * 100 + int(np.argmin(m[1]))]
    return dict(kernel=totals, griddim=1, blockdim=32, args=[m, flags, np.zeros(6, np.int64)],
                expected={2: np.array(want, np.int64)})


def example_unrolled(rng, size="small"):
    want = [np.nanmean(a) + _numba_var(a[1:]) + np.nansum(a) + np.nanstd(a) for a in SAMPLES]
    return dict(kernel=unrolled, griddim=1, blockdim=1, args=[np.zeros(4)], expected={0: np.array(want)},
                rtol=1e-12)
