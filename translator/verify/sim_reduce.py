"""NumPy's reductions as numba-cuda computes them, for the simulator's reference.

Loaded by reference.py by path (it imports nothing from numba2cuda). In the simulator a kernel's `np.sum(a)`
is NumPy's, which sums floats pairwise in blocks; numba-cuda's arraymath adds element by element in C order, in
the accumulator type its typing gives (int64 for integers and bools, the array's own type for floats), and its
mean and var divide in float64. So a float32 sum of 8 or more elements rounds differently in the simulator
than on the GPU; these functions compute numba-cuda's way, for a whole array (axis= and dtype= are NumPy's).
"""

from __future__ import annotations

import builtins

import numpy as np

METHODS = ("sum", "prod", "mean", "var", "std", "min", "max", "all", "any")


def _flat(a):
    return np.asarray(a).ravel(order="C")


def _acc(dtype: np.dtype, rule: str) -> np.dtype:
    if rule == "mean":
        return np.dtype(np.float64) if dtype.kind in "iub" else dtype
    if dtype.kind == "u":
        return np.dtype(np.uint64)
    if dtype.kind in "ib":
        return np.dtype(np.int64)
    return dtype


def _isnan(v) -> bool:
    return bool(v != v)


def _fold(a, rule, start, step, skip_nan=False):
    arr = _flat(a)
    acc = _acc(arr.dtype, rule).type
    c = acc(start)
    with np.errstate(all="ignore"):
        for v in arr:
            if skip_nan and _isnan(v):
                continue
            c = acc(step(c, acc(v)))
    return c


def _mean(a):
    arr = _flat(a)
    with np.errstate(all="ignore"):
        return np.float64(_fold(arr, "mean", 0, lambda c, v: c + v)) / np.float64(arr.size)


def _mean_square_from(a, m, skip_nan=False):
    """The mean of the squared differences from M, summed in float64 (numba-cuda's var and, NaNs skipped, nanvar)."""
    ssd, count = np.float64(0.0), 0
    with np.errstate(all="ignore"):
        for v in _flat(a):
            if skip_nan and _isnan(v):
                continue
            val = np.float64(v) - m
            ssd, count = ssd + val * val, count + 1
        return ssd / np.float64(count)


def _var(a):
    return _mean_square_from(a, _mean(a))


def _nanmean(a):
    c, count = np.float64(0.0), 0
    for v in _flat(a):
        if not _isnan(v):
            c, count = c + np.float64(v), count + 1
    with np.errstate(all="ignore"):
        return c / np.float64(count)


def _nanvar(a):
    return _mean_square_from(a, _nanmean(a), skip_nan=True)


def _extreme(a, better, nan_first):
    """np.min/np.max (NAN_FIRST: the first NaN met is the result) and np.nanmin/np.nanmax (NaNs passed over)."""
    arr = _flat(a)
    if arr.size == 0:
        raise ValueError("zero-size array to reduction operation which has no identity")
    r = arr[0]
    if nan_first and _isnan(r):
        return r
    for v in arr[1:]:
        if nan_first:
            if _isnan(v):
                return v
            if better(v, r):
                r = v
        elif not _isnan(v) and not better(r, v):
            r = v
    return r


# name -> numba-cuda's reduction of a whole array of numbers
WHOLE = {
    "sum": lambda a: _fold(a, "acc", 0, lambda c, v: c + v),
    "prod": lambda a: _fold(a, "acc", 1, lambda c, v: c * v),
    "nansum": lambda a: _fold(a, "acc", 0, lambda c, v: c + v, skip_nan=True),
    "nanprod": lambda a: _fold(a, "acc", 1, lambda c, v: c * v, skip_nan=True),
    "mean": _mean, "var": _var, "std": lambda a: _var(a) ** 0.5, "nanmean": _nanmean, "nanvar": _nanvar,
    "nanstd": lambda a: _nanvar(a) ** 0.5,
    "min": lambda a: _extreme(a, lambda v, r: v < r, True), "max": lambda a: _extreme(a, lambda v, r: v > r, True),
    "nanmin": lambda a: _extreme(a, lambda r, v: r < v, False),
    "nanmax": lambda a: _extreme(a, lambda r, v: r > v, False),
}
WHOLE["amin"], WHOLE["amax"] = WHOLE["min"], WHOLE["max"]
REDUCTIONS = tuple(WHOLE)


class NumpyModule:
    """numpy, with its whole-array reductions computed as numba-cuda computes them (axis= or dtype=, or an
    array of other elements: NumPy's own)."""

    def __getattr__(self, name):
        own = getattr(np, name)
        whole = WHOLE.get(name)
        if whole is None:
            return own

        def reduce(a, *args, **kwargs):
            if args or kwargs or np.asarray(a).dtype.kind not in "iubf":
                return own(a, *args, **kwargs)
            return whole(a)
        return reduce

    def method(self, obj, name):
        """`a.sum()` and the other reductions as methods: numba-cuda's, for an array (in a simulated kernel,
        the simulator's wrapper of one); anything else's own."""
        if name in METHODS and (isinstance(obj, np.ndarray) or type(obj).__name__.startswith("Fake")):
            arr = np.asarray(obj)
            if arr.ndim and arr.dtype.kind in "iubf":
                return getattr(self, name)(arr)
        return getattr(obj, name)()


def builtin_sum(iterable, start=0, *, add):
    """Python's sum() as numba-cuda's ol_sum computes it: `acc = start; for x in it: acc = acc + x`, typed by
    Numba (ADD: its typed +), so an int 0 and float32 elements add in float64 where NumPy 2 keeps float32."""
    if isinstance(iterable, np.ndarray) or type(iterable).__name__.startswith("Fake"):
        arr = np.asarray(iterable)
        if arr.dtype.kind in "iubf" and isinstance(start, int):
            acc = np.result_type(np.int64, arr.dtype).type
            c = acc(start)
            with np.errstate(all="ignore"):
                for v in arr.ravel(order="C"):
                    c = acc(c + acc(v))
            return c
    if isinstance(iterable, tuple):
        acc = start
        for x in iterable:
            acc = add(acc, x)
        return acc
    return builtins.sum(iterable, start)
