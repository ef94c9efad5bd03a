"""Numba spelling -> CUDA C spelling and typing rule: the one table of intrinsics the lowering consults."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import typesys as T


@dataclass(frozen=True)
class Intrinsic:
    key: str  # Numba spelling, canonical: "cuda.syncthreads", "math.sqrt"
    c_name: str | Callable  # C function; a callable picks it from the argument types
    result: Callable  # (arg types) -> Numba result type, or None when the types are not accepted
    nargs: tuple  # (min, max) positional arguments
    helper: str = ""  # n2c helper the C needs (templates/n2c_helpers.cuh section)
    arg_types: Callable | None = None  # (arg types) -> the types each argument is converted to
    c_result: Callable | None = None  # C result type when it differs from Numba's (math.floor -> double)


def _same(ts):
    return ts[0]


def _fixed(t):
    return lambda ts: t


def _float_of(ts):
    # Numba's math functions: float32 in, float32 out; anything else computes in float64
    return T.FLOAT32 if all(t == T.FLOAT32 for t in ts) else T.FLOAT64


def _math_c(name):
    return lambda ts: name + "f" if _float_of(ts) == T.FLOAT32 else name


def _shfl_value(ts):
    t = ts[1]
    return t if t in (T.INT32, T.INT64, T.UINT32, T.UINT64, T.FLOAT32, T.FLOAT64) else None


def _bits_same(ts):
    return ts[0] if ts[0].is_int else None


def _math_arg_types(ts):
    f = _float_of(ts)
    return [f] * len(ts)


TABLE: dict[str, Intrinsic] = {}


def _add(key, c_name, result, nargs, **kw):
    if isinstance(nargs, int):
        nargs = (nargs, nargs)
    TABLE[key] = Intrinsic(key, c_name, result, nargs, **kw)


# --- barriers, fences
_add("cuda.syncthreads", "__syncthreads", _fixed(T.VOID), 0)
_add("cuda.syncthreads_count", "__syncthreads_count", _fixed(T.INT32), 1)
_add("cuda.syncthreads_and", "__syncthreads_and", _fixed(T.INT32), 1)
_add("cuda.syncthreads_or", "__syncthreads_or", _fixed(T.INT32), 1)
_add("cuda.syncwarp", "__syncwarp", _fixed(T.VOID), (0, 1))
_add("cuda.threadfence", "__threadfence", _fixed(T.VOID), 0)
_add("cuda.threadfence_block", "__threadfence_block", _fixed(T.VOID), 0)
_add("cuda.threadfence_system", "__threadfence_system", _fixed(T.VOID), 0)

# --- warp-level
_add("cuda.shfl_sync", "__shfl_sync", _shfl_value, 3, arg_types=lambda ts: [None, ts[1], None])
_add("cuda.shfl_up_sync", "__shfl_up_sync", _shfl_value, 3, arg_types=lambda ts: [None, ts[1], None])
_add("cuda.shfl_down_sync", "__shfl_down_sync", _shfl_value, 3, arg_types=lambda ts: [None, ts[1], None])
_add("cuda.shfl_xor_sync", "__shfl_xor_sync", _shfl_value, 3, arg_types=lambda ts: [None, ts[1], None])
for _name, _c in (("all_sync", "__all_sync"), ("any_sync", "__any_sync"), ("eq_sync", "__uni_sync")):
    _add(f"cuda.{_name}", _c, _fixed(T.BOOL), 2, arg_types=lambda ts: [None, None], c_result=lambda ts: T.INT32)
_add("cuda.ballot_sync", "__ballot_sync", _fixed(T.UINT32), 2)
_add("cuda.activemask", "__activemask", _fixed(T.UINT32), 0)
_add("cuda.lanemask_lt", "n2c::lanemask_lt", _fixed(T.UINT32), 0, helper="lanemask_lt")
_add("cuda.match_any_sync", "__match_any_sync", _fixed(T.UINT32), 2, arg_types=lambda ts: [None, ts[1]])

# --- bit manipulation and fused ops
_add("cuda.popc", lambda ts: "__popcll" if ts[0].bits == 64 else "__popc", _bits_same, 1,
     arg_types=lambda ts: [T.UINT64 if ts[0].bits == 64 else T.UINT32], c_result=lambda ts: T.INT32)
_add("cuda.clz", lambda ts: "__clzll" if ts[0].bits == 64 else "__clz", _bits_same, 1,
     arg_types=lambda ts: [T.INT64 if ts[0].bits == 64 else T.INT32], c_result=lambda ts: T.INT32)
_add("cuda.ffs", lambda ts: "__ffsll" if ts[0].bits == 64 else "__ffs", _fixed(T.UINT32), 1,
     arg_types=lambda ts: [T.INT64 if ts[0].bits == 64 else T.INT32], c_result=lambda ts: T.INT32)
_add("cuda.brev", lambda ts: "__brevll" if ts[0].bits == 64 else "__brev",
     lambda ts: T.UINT64 if ts[0].bits == 64 else T.UINT32, 1,
     arg_types=lambda ts: [T.UINT64 if ts[0].bits == 64 else T.UINT32])
_add("cuda.fma", _math_c("fma"), _float_of, 3, arg_types=_math_arg_types)
_add("cuda.cbrt", _math_c("cbrt"), _float_of, 1, arg_types=_math_arg_types)

# --- math module: float32 stays float32 (Numba calls the single-precision libdevice function)
for _name in ("sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
              "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "lgamma",
              "tgamma", "fabs"):
    _add(f"math.{_name}", _math_c(_name), _float_of, 1, arg_types=_math_arg_types)
for _name in ("atan2", "pow", "fmod", "hypot", "copysign"):
    _add(f"math.{_name}", _math_c(_name), _float_of, 2, arg_types=_math_arg_types)
for _name in ("floor", "ceil", "trunc"):
    # Python's math.floor returns an int; Numba types it int64 (the C function returns a float). An integer
    # argument goes through double, as Numba converts it: floor(int64_t) is a host-only overload under nvcc.
    _add(f"math.{_name}", _math_c(_name), lambda ts: ts[0] if ts[0].is_int else T.INT64, 1,
         arg_types=lambda ts: [T.FLOAT64] if ts[0].is_int else _math_arg_types(ts), c_result=_float_of)
for _name in ("isnan", "isinf", "isfinite"):
    _add(f"math.{_name}", _name, _fixed(T.BOOL), 1,
         arg_types=lambda ts: [ts[0] if ts[0].is_float else T.FLOAT64])
_add("math.degrees", "n2c::degrees", _float_of, 1, helper="degrees", arg_types=_math_arg_types)
_add("math.radians", "n2c::radians", _float_of, 1, helper="radians", arg_types=_math_arg_types)
_add("math.ldexp", _math_c("ldexp"), lambda ts: _float_of(ts[:1]), 2,
     arg_types=lambda ts: [_float_of(ts[:1]), T.INT32])

# NumPy spellings of the same functions resolve to the same entries.
for _name in ("sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "sinh",
              "cosh", "tanh", "fabs", "floor", "ceil", "trunc", "isnan", "isinf", "isfinite", "hypot",
              "copysign", "degrees", "radians"):
    if _name in ("floor", "ceil", "trunc"):
        # np.floor(float32) returns a float32, unlike math.floor
        _add(f"np.{_name}", _math_c(_name), _float_of, 1, arg_types=_math_arg_types)
    else:
        TABLE[f"np.{_name}"] = TABLE[f"math.{_name}"]
for _alias, _name in (("np.arcsin", "asin"), ("np.arccos", "acos"), ("np.arctan", "atan"),
                      ("np.arctan2", "atan2"), ("np.power", "pow"), ("np.fmod", "fmod")):
    TABLE[_alias] = TABLE[f"math.{_name}"]

ATOMICS = {
    # Numba name: (CUDA function or n2c helper, helper section, accepted element kinds)
    "add": ("n2c::atomic_add", "atomic_add", "iuf"),
    "sub": ("n2c::atomic_sub", "atomic_sub", "iuf"),
    "max": ("n2c::atomic_max", "atomic_max", "iuf"),
    "min": ("n2c::atomic_min", "atomic_min", "iuf"),
    "nanmax": ("n2c::atomic_nanmax", "atomic_max", "f"),
    "nanmin": ("n2c::atomic_nanmin", "atomic_min", "f"),
    "and_": ("n2c::atomic_and", "atomic_bits", "iu"),
    "or_": ("n2c::atomic_or", "atomic_bits", "iu"),
    "xor": ("n2c::atomic_xor", "atomic_bits", "iu"),
    "exch": ("n2c::atomic_exch", "atomic_exch", "iuf"),
    "inc": ("n2c::atomic_inc", "atomic_inc", "u"),
    "dec": ("n2c::atomic_dec", "atomic_inc", "u"),
}

BUILTIN_DIM3 = {"cuda.threadIdx": "threadIdx", "cuda.blockIdx": "blockIdx", "cuda.blockDim": "blockDim",
                "cuda.gridDim": "gridDim"}


def lookup(key: str) -> Intrinsic | None:
    return TABLE.get(key)
