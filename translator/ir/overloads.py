"""Numba's overload resolution, for the functions numba-cuda declares by lists of signatures (ir/numba_cases.py):
each candidate is rated by the conversions its arguments need (unsafe, then safe, then promotions, fewest
first) and the first best one wins, as numba-cuda's typing context does. So math.fmod(float32, int8) is
float32 (int8 converts to float32 safely) while math.sqrt(int8) is float64 (int8 promotes to int64, whose case
is float64), and math.floor(float32) is a float32: numba-cuda's floor returns a float, not Python's int."""

from __future__ import annotations

from . import typesys as T
from .numba_cases import CASES, CONVERSIONS, SCALARS

_COLUMN = {name: k for k, name in enumerate(SCALARS)}


def _type(name: str):
    if name.startswith("UniTuple("):  # math.modf: 'UniTuple(float32 x 2)'
        item = T.SCALARS[name[len("UniTuple("):].split()[0]]
        return T.Tuple((item, item))
    return T.SCALARS[name]


def _rating(ts, formals):
    kinds = []
    for t, formal in zip(ts, formals):
        row = CONVERSIONS.get(t.name) if isinstance(t, T.Scalar) else None
        kind = row[_COLUMN[formal]] if row else "-"
        if kind == "-":
            return None
        kinds.append(kind)
    return tuple(kinds.count(k) for k in "usp")


def resolve(key: str, ts) -> tuple | None:
    """(the argument types, the result type) of the signature numba-cuda picks for KEY called with TS, or None
    where no declared signature takes them."""
    for cases in CASES[key]:
        best = None
        for formals, result in cases:
            if len(formals) != len(ts):
                continue
            rating = _rating(ts, formals)
            if rating is not None and (best is None or rating < best[0]):
                best = (rating, formals, result)
        if best is not None:
            return [T.SCALARS[f] for f in best[1]], _type(best[2])
    return None


def arity(key: str) -> int:
    """How many arguments KEY's declared signatures take."""
    return len(CASES[key][0][0][0])
