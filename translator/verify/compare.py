"""expected vs actual arrays -> report: bit-identical, max ULP, max abs/rel error, first differing index.

Two ways to accept a difference: a ULP budget (against the Numba original: what two faithful implementations
may differ by, derived from what the kernel computes; 0 means bit-identical up to the sign of zero), or
rtol/atol (against a NumPy `expected`, or when the user gives tolerances)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..runtime.records import as_words

# Like torch.testing.assert_close: (rtol, atol) per floating dtype.
DEFAULT_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
}


def default_tolerance(dtype) -> tuple[float, float]:
    """(rtol, atol) for a dtype; integers and bools are compared exactly."""
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        return 0.0, 0.0
    return DEFAULT_TOLERANCES.get(dtype.name, DEFAULT_TOLERANCES["float64"])


def _scalar(v: Any) -> Any:
    v = v.item() if isinstance(v, np.generic) else v
    return v


def format_value(v: Any) -> str:
    if isinstance(v, float):
        return repr(v) if not np.isfinite(v) else f"{v:.9g}"
    return repr(v)


@dataclass
class ArrayReport:
    """How `actual` differs from `expected`; `ok` says whether it is within tolerance."""

    dtype: str
    shape: tuple
    ok: bool
    bit_identical: bool
    max_ulp: int | None  # floats only, over positions where neither side is NaN
    max_abs: float
    max_rel: float  # over positions where expected is finite and nonzero
    mismatches: int  # elements outside tolerance (or with NaN/Inf in different places)
    first_index: tuple | None  # first element outside tolerance, row-major
    expected_value: Any = None
    actual_value: Any = None
    rtol: float = 0.0
    atol: float = 0.0
    note: str = ""
    ulps: int | None = None  # the ULP budget the comparison accepted, when it used one
    budget: str = ""  # why that budget

    def describe_first(self) -> str:
        if self.first_index is None:
            return self.note or "no difference"
        return (f"first difference at index {self.first_index}: expected {format_value(self.expected_value)}, "
                f"got {format_value(self.actual_value)} ({self.mismatches} of {int(np.prod(self.shape))} elements differ)")

    def to_json(self) -> dict:
        d = asdict(self)
        d["shape"] = list(self.shape)
        d["first_index"] = None if self.first_index is None else list(self.first_index)
        for key in ("max_abs", "max_rel"):
            if not np.isfinite(d[key]):
                d[key] = str(d[key])
        for key in ("expected_value", "actual_value"):
            v = d[key]
            if isinstance(v, float) and not np.isfinite(v):
                d[key] = str(v)
        return d


def ordered_bits(a: np.ndarray) -> np.ndarray:
    """Map floats to integers whose order is the floats' order (-0.0 and +0.0 both map to 0)."""
    itype = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    i = a.view(itype).astype(np.int64)
    return np.where(i < 0, np.int64(np.iinfo(itype).min) - i, i)


def ulp_distance(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Units in the last place between two float arrays of one dtype (uint64; NaN positions meaningless)."""
    d = ordered_bits(expected).view(np.uint64) - ordered_bits(actual).view(np.uint64)
    return np.minimum(d, np.uint64(0) - d)


def field_bytes(dtype: np.dtype) -> np.ndarray:
    """Which bytes of an element hold a value: all of them, but for a record only its fields' (the padding
    between them is no one's, and NumPy's copies of a record array need not keep it)."""
    mask = np.ones(dtype.itemsize, dtype=bool)
    if dtype.names is not None:
        mask[:] = False
        for n in dtype.names:
            sub, offset = dtype.fields[n][:2]
            mask[offset:offset + sub.itemsize] = True
    return mask


def first_bit_difference(a: np.ndarray, b: np.ndarray):
    """(index, a_value, b_value) of the first element whose bits differ, or None."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return (), None, None
    if a.size == 0:
        return None
    ua = np.ascontiguousarray(a).view(np.uint8).reshape(a.size, a.dtype.itemsize)
    ub = np.ascontiguousarray(b).view(np.uint8).reshape(b.size, b.dtype.itemsize)
    diff = np.any((ua != ub) & field_bytes(a.dtype), axis=1)
    if not diff.any():
        return None
    flat = int(np.argmax(diff))
    idx = tuple(int(x) for x in np.unravel_index(flat, a.shape))
    return idx, _scalar(a.reshape(-1)[flat]), _scalar(b.reshape(-1)[flat])


def _judge(e: np.ndarray, a: np.ndarray, rtol: float, atol: float, ulps, scale_ulps):
    """(good, max_abs, max_rel, max_ulp) of flat arrays of one dtype: which elements are within tolerance."""
    max_ulp = None
    if e.dtype.kind == "f":
        e_nan, a_nan = np.isnan(e), np.isnan(a)
        both_finite = np.isfinite(e) & np.isfinite(a)
        with np.errstate(all="ignore"):
            e_abs = np.abs(e.astype(np.float64))
            absdiff = np.where(both_finite, np.abs(a.astype(np.float64) - e.astype(np.float64)), 0.0)
            if ulps is not None:
                finite_e = e_abs[np.isfinite(e_abs)]
                scale = np.spacing(e.dtype.type(finite_e.max(initial=0.0))).astype(np.float64)
                dist = np.zeros(e.shape, dtype=np.uint64)
                dist[both_finite] = ulp_distance(e[both_finite], a[both_finite])
                close = both_finite & ((dist <= np.uint64(ulps)) | (absdiff <= scale_ulps * scale))
            else:
                close = both_finite & (absdiff <= atol + rtol * e_abs)
            rel_mask = both_finite & (e != 0)
            rel = np.where(rel_mask, absdiff / np.where(rel_mask, e_abs, 1.0), 0.0)
        good = close | (e_nan & a_nan) | (~e_nan & ~a_nan & ~both_finite & (e == a))
        # Inf or NaN on one side only is an infinite error.
        bad_special = ~good & ~both_finite
        max_abs = float("inf") if bad_special.any() else float(absdiff.max(initial=0.0))
        max_rel = float("inf") if bad_special.any() else float(rel.max(initial=0.0))
        comparable = ~e_nan & ~a_nan
        if (e_nan != a_nan).any():
            max_ulp = None  # NaN on one side only: no ULP distance
        elif comparable.any():
            max_ulp = int(ulp_distance(e[comparable], a[comparable]).max())
        else:
            max_ulp = 0
    else:
        wide = np.float64 if e.dtype.kind == "u" and e.dtype.itemsize == 8 else np.int64
        absdiff = np.abs(a.astype(wide) - e.astype(wide)).astype(np.float64)
        good = a == e
        max_abs = float(absdiff.max(initial=0.0))
        with np.errstate(all="ignore"):
            ef = np.abs(e.astype(np.float64))
            rel = np.where(ef != 0, absdiff / np.where(ef != 0, ef, 1.0), 0.0)
        max_rel = float(rel.max(initial=0.0))
    return good, max_abs, max_rel, max_ulp


def _parts(a: np.ndarray) -> np.ndarray:
    """A complex array as the floats of its real and imaginary parts (one more dimension of 2); any other as it is,
    C-contiguous."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind != "c":
        return a
    return a.view(np.dtype(f"f{a.dtype.itemsize // 2}")).reshape(a.shape + (2,))


def compare_records(expected, actual, rtol, atol, ulps, budget, scale_ulps) -> ArrayReport:
    """Records field by field, each as its own type compares (the padding between fields is no one's value):
    the first difference is the first record with a field outside tolerance, named by index and field."""
    count = int(np.prod(expected.shape))
    bad = np.zeros(count, dtype=bool)
    firsts, stats, identical = {}, [], True
    for n in expected.dtype.names:
        e, a = (_parts(x[n]).reshape(count, -1) for x in (expected, actual))
        d_rtol, d_atol = default_tolerance(e.dtype)
        good, max_abs, max_rel, max_ulp = _judge(e.reshape(-1), a.reshape(-1), d_rtol if rtol is None else rtol,
                                                 d_atol if atol is None else atol, ulps, scale_ulps)
        stats.append((max_abs, max_rel, max_ulp or 0))
        identical &= e.tobytes() == a.tobytes()
        failed = ~good.reshape(count, -1).all(axis=1)
        if failed.any():
            row = int(np.argmax(failed))
            col = int(np.argmax(~good.reshape(count, -1)[row]))
            firsts.setdefault(row, (n, _scalar(e[row, col]), _scalar(a[row, col])))
        bad |= failed
    first = ev = av = None
    if bad.any():
        row = int(np.argmax(bad))
        field, ev, av = firsts[row]  # the earliest failing record is some field's first
        first = tuple(int(x) for x in np.unravel_index(row, expected.shape)) + (field,)
    return ArrayReport(str(expected.dtype), tuple(expected.shape), not bad.any(), identical,
                       max(s[2] for s in stats), max(s[0] for s in stats), max(s[1] for s in stats), int(bad.sum()),
                       first, ev, av, rtol or 0.0, atol or 0.0, budget=budget)


def compare_arrays(expected: np.ndarray, actual: np.ndarray, rtol: float | None = None,
                   atol: float | None = None, ulps: int | None = None, budget: str = "",
                   scale_ulps: int = 0) -> ArrayReport:
    """Compare elementwise: integers exactly; floats within `ulps` units in the last place (or within
    `scale_ulps` spacings of the array's largest expected value: a difference cancellation magnified), else
    with |a - e| <= atol + rtol * |e|; NaN/Inf in place."""
    expected = np.asarray(expected)
    actual = np.asarray(actual)
    if expected.dtype.names is not None and expected.dtype == actual.dtype and expected.shape == actual.shape:
        if not all(expected.dtype.fields[n][0] == np.uint64 for n in expected.dtype.names):
            return compare_records(expected, actual, rtol, atol, ulps, budget, scale_ulps)
        expected, actual = as_words(expected), as_words(actual)  # records (RNG states): word by word, exactly
    if expected.dtype.kind == "c" and expected.dtype == actual.dtype and expected.shape == actual.shape:
        expected, actual = _parts(expected), _parts(actual)
    if expected.shape != actual.shape or expected.dtype != actual.dtype:
        return ArrayReport(str(expected.dtype), tuple(expected.shape), False, False, None, float("inf"),
                           float("inf"), int(expected.size), None,
                           note=f"expected {expected.dtype}{list(expected.shape)}, got {actual.dtype}{list(actual.shape)}")
    d_rtol, d_atol = default_tolerance(expected.dtype)
    rtol = d_rtol if rtol is None else float(rtol)
    atol = d_atol if atol is None else float(atol)
    bit_identical = expected.tobytes() == actual.tobytes()
    e = expected.reshape(-1)
    a = actual.reshape(-1)
    good, max_abs, max_rel, max_ulp = _judge(e, a, rtol, atol, ulps, scale_ulps)
    bad = ~good
    mismatches = int(bad.sum())
    first = None
    ev = av = None
    if mismatches:
        flat = int(np.argmax(bad))
        first = tuple(int(x) for x in np.unravel_index(flat, expected.shape))
        ev, av = _scalar(e[flat]), _scalar(a[flat])
    if ulps is not None:
        rtol = atol = 0.0
    return ArrayReport(str(expected.dtype), tuple(expected.shape), mismatches == 0, bit_identical, max_ulp,
                       max_abs, max_rel, mismatches, first, ev, av, rtol, atol,
                       ulps=ulps if expected.dtype.kind == "f" else None, budget=budget)
