"""Numba spelling -> CUDA C spelling and typing rule: the one table of intrinsics the lowering consults."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import overloads
from . import typesys as T


@dataclass(frozen=True)
class Intrinsic:
    key: str  # Numba spelling, canonical: "cuda.syncthreads", "math.sqrt"
    c_name: str | Callable  # C function; a callable picks it from the argument types
    result: Callable  # (arg types) -> Numba result type, or None when the types are not accepted
    nargs: tuple  # (min, max) positional arguments
    helper: str | Callable = ""  # n2c helper the C needs (templates/n2c_helpers.cuh section), or (arg types) -> it
    arg_types: Callable | None = None  # (arg types) -> the types each argument is converted to
    c_result: Callable | None = None  # C result type when it differs from Numba's (__all_sync's int)
    tuple_result: bool = False  # returns a struct with fields v0, v1, ...: only `a, b = f(...)` takes it
    pointers: dict | None = None  # argument index -> element type of a CPointer it takes (a foreign function's)


def _same(ts):
    return ts[0]


def _fixed(t):
    return lambda ts: t


def _shfl_value(ts):
    t = ts[1]
    return t if t in (T.INT32, T.INT64, T.UINT32, T.UINT64, T.FLOAT32, T.FLOAT64) else None


def _bits_same(ts):
    return ts[0] if ts[0].is_int else None


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
_add("cuda.nanosleep", "__nanosleep", _fixed(T.VOID), 1, arg_types=lambda ts: [T.UINT32])  # ns, as uint32

# cuda.cg.this_grid().sync(): the CUDA spelling; the CPU runtime provides the same namespace
_add("cuda.cg.this_grid.sync", "cooperative_groups::this_grid().sync", _fixed(T.VOID), 0)

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
def _match_value(ts):
    # Numba's cases: the value converts to int32, int64, float32 or float64 (uint32 widens to int64)
    t = ts[1]
    if t.is_float:
        return [T.UINT32, t]
    return [T.UINT32, T.INT32 if t.kind in "ib" and t.bits <= 32 or t.kind == "u" and t.bits < 32 else T.INT64]


_add("cuda.match_any_sync", "__match_any_sync", _fixed(T.INT32), 2, arg_types=_match_value,
     c_result=_fixed(T.UINT32))
# (mask, all lanes agree): a tuple the kernel unpacks, `m, ok = cuda.match_all_sync(mask, v)`
_add("cuda.match_all_sync", "n2c::match_all_sync", _fixed(T.Tuple((T.INT32, T.BOOL))), 2, helper="match_all",
     arg_types=_match_value, tuple_result=True)

# --- bit manipulation and fused ops
_add("cuda.popc", lambda ts: "__popcll" if ts[0].bits == 64 else "__popc", _bits_same, 1,
     arg_types=lambda ts: [T.UINT64 if ts[0].bits == 64 else T.UINT32], c_result=lambda ts: T.INT32)
_add("cuda.clz", lambda ts: "__clzll" if ts[0].bits == 64 else "__clz", _bits_same, 1,
     arg_types=lambda ts: [T.INT64 if ts[0].bits == 64 else T.INT32], c_result=lambda ts: T.INT32)
_add("cuda.ffs", lambda ts: "__ffsll" if ts[0].bits == 64 else "__ffs", _fixed(T.UINT32), 1,
     arg_types=lambda ts: [T.INT64 if ts[0].bits == 64 else T.INT32], c_result=lambda ts: T.INT32)
# numba-cuda registers brev for uint32 and uint64 only, and its overload resolution sends every other integer,
# int64 included, to uint32 (compile_ptx: brev.b32 for int64, brev.b64 for uint64 only)
_add("cuda.brev", lambda ts: "__brevll" if ts[0] == T.UINT64 else "__brev",
     lambda ts: T.UINT64 if ts[0] == T.UINT64 else T.UINT32, 1,
     arg_types=lambda ts: [T.UINT64 if ts[0] == T.UINT64 else T.UINT32])
# key -> C function (float64 spelling): typed by numba-cuda's own signature lists (ir/overloads.py)
_DECLARED = {"cuda.fma": "fma", "cuda.cbrt": "cbrt", "math.gamma": "tgamma", "math.modf": "n2c::modf",
             "math.degrees": "n2c::degrees", "math.radians": "n2c::radians", **{f"math.{n}": n for n in (
                 "sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
                 "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "lgamma", "fabs",
                 "atan2", "pow", "fmod", "hypot", "copysign", "remainder", "nextafter", "floor", "ceil", "trunc",
                 "ldexp")}}


def _declared_call(key, ts):
    """(C argument types, the call's float type) of numba-cuda's chosen signature for KEY. Its integer-only
    cases (math.sqrt(int64) -> float64) convert the integers to the result's float first, as its lowering does;
    an integer beside a float (ldexp's exponent, pow's int32 power) stays one."""
    formals, result = overloads.resolve(key, ts)
    flt = next((f for f in formals if f.is_float), result.items[0] if isinstance(result, T.Tuple) else result)
    return ([flt] * len(formals) if all(f.is_int for f in formals) else formals), flt


def _pow_int(key, ts) -> bool:
    """math.pow's (float, int32) cases: numba-cuda calls libdevice's powif/powi, not powf/pow."""
    return key == "math.pow" and _declared_call(key, ts)[0][1] == T.INT32


def _add_declared(key, c_base):
    helper = c_base[len("n2c::"):] if c_base.startswith("n2c::") else ""
    suffix = "" if helper in ("degrees", "radians") else "f"  # those two are templates on the float type
    _add(key, lambda ts: "n2c::pow_int" if _pow_int(key, ts) else
         c_base + (suffix if _declared_call(key, ts)[1] == T.FLOAT32 else ""),
         lambda ts: (overloads.resolve(key, ts) or (None, None))[1], overloads.arity(key),
         helper=(lambda ts: "pow_int" if _pow_int(key, ts) else "") if key == "math.pow" else helper,
         arg_types=lambda ts: _declared_call(key, ts)[0],
         tuple_result=key == "math.modf")  # (fractional part, integral part): `f, n = math.modf(x)`


for _key, _c in _DECLARED.items():
    _add_declared(_key, _c)
for _name in ("isnan", "isinf", "isfinite"):
    _add(f"math.{_name}", _name, _fixed(T.BOOL), 1,
         arg_types=lambda ts: [ts[0] if ts[0].is_float else T.FLOAT64])

# --- numba.cuda.libdevice: libdevice's functions called by name, each of one fixed type (an `f` suffix is
# float32, none float64; the argument converts to it, as Numba's declared signature does); in C they are the
# CUDA math functions of the same name.
_LIBDEVICE_1 = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
                "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "cbrt", "fabs",
                "floor", "ceil", "trunc", "round", "rint", "nearbyint", "erf", "erfc", "lgamma", "tgamma", "logb")
_LIBDEVICE_2 = ("pow", "atan2", "fmin", "fmax", "fmod", "hypot", "copysign", "fdim", "remainder", "nextafter")
for _t, _suffix in ((T.FLOAT32, "f"), (T.FLOAT64, "")):
    for _nargs, _names in ((1, _LIBDEVICE_1), (2, _LIBDEVICE_2), (3, ("fma",))):
        for _name in _names:
            _add(f"cuda.libdevice.{_name}{_suffix}", f"{_name}{_suffix}", _fixed(_t), _nargs,
                 arg_types=lambda ts, t=_t: [t] * len(ts))
    # (sin, cos) as Numba's tuple, `s, c = libdevice.sincosf(x)`
    _add(f"cuda.libdevice.sincos{_suffix}", f"n2c::sincos{_suffix}", _fixed(T.Tuple((_t, _t))), 1,
         helper="sincos", arg_types=lambda ts, t=_t: [t], tuple_result=True)
    # (mantissa, exponent): libdevice writes the exponent through a pointer, Numba returns both
    _add(f"cuda.libdevice.frexp{_suffix}", f"n2c::frexp{_suffix}", _fixed(T.Tuple((_t, T.INT32))), 1,
         helper="frexp", arg_types=lambda ts, t=_t: [t], tuple_result=True)
# |x - y| + z of int32s (libdevice declares every argument and the result int32)
for _name in ("sad", "usad"):
    _add(f"cuda.libdevice.{_name}", f"n2c::{_name}", _fixed(T.INT32), 3, helper="sad",
         arg_types=lambda ts: [T.INT32] * 3)

# NumPy ufuncs on scalars: typed by NumPy's loop list as Numba picks the loop (first loop every input casts
# to safely; any integer casts to a float when integers and floats are mixed; no float16 loops), so
# np.sin(int32) is float64 and np.arctan2(float32, int64) is float32, unlike math.*.
def np_loop(ufunc: str, ts):
    """(input types, output type) of the NumPy loop Numba chooses for scalar inputs TS, or None."""
    import numpy as np

    uf = getattr(np, ufunc)
    try:
        dts = [np.dtype(t.name) for t in ts]
    except TypeError:
        return None
    mixed = any(d.kind in "iu" for d in dts) and any(d.kind in "cf" for d in dts)
    for candidate in uf.types:
        ins, out = candidate[:uf.nin], candidate[-1]
        if any(c in "eOgGFDmM" for c in ins + out):
            continue
        if all((mixed and d.kind in "iu" and np.dtype(c).kind == "f") or np.can_cast(d, np.dtype(c), "safe")
               for d, c in zip(dts, ins)):
            to = [T.scalar_by_name(np.dtype(c).name) for c in ins]
            return to, T.scalar_by_name(np.dtype(out).name)
    return None


def _np_result(ufunc, floats_only=False):
    def result(ts):
        loop = np_loop(ufunc, ts)
        if loop is None or (floats_only and not loop[1].is_float):
            return None
        return loop[1]
    return result


def _np_args(ufunc):
    return lambda ts: np_loop(ufunc, ts)[0]


def _np_float_c(ufunc, c_name):
    return lambda ts: (c_name + "f") if np_loop(ufunc, ts)[1] == T.FLOAT32 else c_name


_NP_FLOAT_FUNCS = {  # NumPy name: C function (float64 spelling); float32 loops call the f-suffixed one
    "sqrt": "sqrt", "cbrt": "cbrt", "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log2": "log2",
    "log10": "log10", "log1p": "log1p", "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin",
    "arccos": "acos", "arctan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "arcsinh": "asinh",
    "arccosh": "acosh", "arctanh": "atanh", "fabs": "fabs", "floor": "floor", "ceil": "ceil", "trunc": "trunc",
    "rint": "rint", "arctan2": "atan2", "hypot": "hypot", "power": "pow", "fmod": "fmod", "copysign": "copysign",
}
for _name, _c in _NP_FLOAT_FUNCS.items():
    _nin = getattr(__import__("numpy"), _name).nin
    _add(f"np.{_name}", _np_float_c(_name, _c), _np_result(_name, floats_only=True), _nin, arg_types=_np_args(_name))
for _name, _helper in (("deg2rad", "radians"), ("radians", "radians"), ("rad2deg", "degrees"),
                       ("degrees", "degrees")):
    _add(f"np.{_name}", f"n2c::{_helper}", _np_result(_name, floats_only=True), 1, helper=_helper,
         arg_types=_np_args(_name))
for _name in ("isnan", "isinf", "isfinite"):
    TABLE[f"np.{_name}"] = TABLE[f"math.{_name}"]
for _name in ("maximum", "minimum", "fmax", "fmin", "square", "sign", "negative", "absolute"):
    _add(f"np.{_name}", f"n2c::np_{_name}", _np_result(_name), getattr(__import__("numpy"), _name).nin,
         helper="np_ufuncs", arg_types=_np_args(_name))
TABLE["np.abs"] = TABLE["np.absolute"]
# comparisons, logical and bitwise ufuncs: NumPy's loop picks the operand type, the operation is C's own
for _name in ("greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "logical_and", "logical_or",
              "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift",
              "right_shift"):
    _add(f"np.{_name}", f"n2c::np_{_name}", _np_result(_name), getattr(__import__("numpy"), _name).nin,
         helper="np_ufuncs", arg_types=_np_args(_name))
TABLE["np.bitwise_not"] = TABLE["np.invert"]

# cmath: a real argument is made complex as Numba's overload resolution does (float32 and small integers to
# complex64, anything wider to complex128); the n2c::c* helpers compute in Numba's precisions.
def _as_complex(t):
    return t if t.is_complex else T.unify(t, T.COMPLEX64)


def _complex_only(result):
    return lambda ts: result(ts[0]) if ts[0].is_complex else None


for _name, _c in (("exp", "cexp"), ("sqrt", "csqrt"), ("sin", "csin"), ("cos", "ccos"), ("tan", "ctan")):
    _add(f"cmath.{_name}", f"n2c::{_c}", lambda ts: _as_complex(ts[0]), 1, helper="cmath",
         arg_types=lambda ts: [_as_complex(ts[0])])


def _log_type(ts):
    # cmath.log(z, base) is log(z) / log(base), both arguments of one complex type, as Numba's typing unifies them
    return _as_complex(T.unify(*ts) if len(ts) == 2 else ts[0])


_add("cmath.log", lambda ts: "n2c::clog" if len(ts) == 1 else "n2c::clog_base", _log_type, (1, 2), helper="cmath",
     arg_types=lambda ts: [_log_type(ts)] * len(ts))
for _name in ("isnan", "isinf", "isfinite"):
    _add(f"cmath.{_name}", f"n2c::c{_name}", _fixed(T.BOOL), 1, helper="complex",
         arg_types=lambda ts: [_as_complex(ts[0])])
for _name in ("acos", "asin", "asinh", "atan", "atanh"):
    _add(f"cmath.{_name}", f"n2c::c{_name}", lambda ts: _as_complex(ts[0]), 1, helper="cmath",
         arg_types=lambda ts: [_as_complex(ts[0])])
_add("cmath.acosh", "n2c::cacosh", _complex_only(lambda t: T.COMPLEX128), 1, helper="cmath")
_add("cmath.sinh", "n2c::csinh", _complex_only(lambda t: t), 1, helper="cmath")
_add("cmath.cosh", "n2c::ccosh", _complex_only(lambda t: t), 1, helper="cmath")
_add("cmath.tanh", "n2c::ctanh", _complex_only(lambda t: T.COMPLEX128), 1, helper="cmath")
_add("cmath.log10", "n2c::clog10", _complex_only(lambda t: T.COMPLEX128), 1, helper="cmath")
_add("cmath.phase", "n2c::phase", _complex_only(T.underlying), 1, helper="cmath")
_add("cmath.polar", "n2c::polar", _complex_only(lambda t: T.Tuple((T.underlying(t), T.underlying(t)))), 1,
     helper="cmath", tuple_result=True)
_add("cmath.rect", "n2c::rect",
     lambda ts: (T.COMPLEX64 if ts == [T.FLOAT32, T.FLOAT32] else T.COMPLEX128) if all(t.is_float for t in ts)
     else None, 2, helper="cmath")
for _name in ("conjugate", "conj"):
    _add(f"np.{_name}", "n2c::conj", lambda ts: ts[0] if ts[0].kind != "b" else None, 1, helper="complex")

# numba.cuda.random: xoroshiro128+ exactly as numba-cuda computes it; the first argument is the address of
# states[index] (the frontend makes it), so states made by create_xoroshiro128p_states are drawn from in place.
for _name, _result in (("xoroshiro128p_next", T.UINT64), ("xoroshiro128p_uniform_float32", T.FLOAT32),
                       ("xoroshiro128p_uniform_float64", T.FLOAT64), ("xoroshiro128p_normal_float32", T.FLOAT32),
                       ("xoroshiro128p_normal_float64", T.FLOAT64), ("xoroshiro128p_jump", T.VOID)):
    _add(f"cuda.random.{_name}", f"n2c::{_name}", _fixed(_result), 1, helper="xoroshiro128p")
_add("cuda.random.init_xoroshiro128p_state", "n2c::init_xoroshiro128p_state", _fixed(T.VOID), 2,
     helper="xoroshiro128p", arg_types=lambda ts: [None, T.UINT64])

# cuda.fp16: cuda_fp16.h's own functions (numba-cuda binds these same ones), on __half
_FP16 = {"hadd": ("__hadd", 2), "hsub": ("__hsub", 2), "hmul": ("__hmul", 2), "hdiv": ("__hdiv", 2),
         "hmax": ("__hmax", 2), "hmin": ("__hmin", 2), "hneg": ("__hneg", 1), "habs": ("__habs", 1),
         "hfma": ("__hfma", 3), "hsin": ("hsin", 1), "hcos": ("hcos", 1), "hlog": ("hlog", 1), "hlog2": ("hlog2", 1),
         "hlog10": ("hlog10", 1), "hexp": ("hexp", 1), "hexp2": ("hexp2", 1), "hexp10": ("hexp10", 1),
         "hsqrt": ("hsqrt", 1), "hrsqrt": ("hrsqrt", 1), "hrcp": ("hrcp", 1), "hceil": ("hceil", 1),
         "hfloor": ("hfloor", 1), "htrunc": ("htrunc", 1), "hrint": ("hrint", 1), "htanh": ("htanh", 1)}
for _name, (_c, _n) in _FP16.items():
    for _key in (_name, _c if _c.startswith("__") else None):
        if _key:
            _add(f"cuda.fp16.{_key}", _c, _fixed(T.FLOAT16), _n, helper="fp16",
                 arg_types=(lambda n: lambda ts: [T.FLOAT16] * n)(_n))
for _name in ("heq", "hne", "hgt", "hge", "hlt", "hle"):
    for _key in (_name, f"__{_name}"):
        _add(f"cuda.fp16.{_key}", f"__{_name}", _fixed(T.BOOL), 2, helper="fp16",
             arg_types=lambda ts: [T.FLOAT16, T.FLOAT16])


def _overloaded_for(base: Intrinsic, t: T.Scalar, c: str) -> Intrinsic:
    """BASE (a math.* entry) where every argument is of type T calls C with a T result, as numba-cuda's overload of
    the math function for its float16 and bfloat16 does; other arguments keep BASE's meaning."""
    only = lambda ts: ts and all(a == t for a in ts)  # noqa: E731
    return Intrinsic(base.key, lambda ts: c if only(ts) else (base.c_name(ts) if callable(base.c_name) else base.c_name),
                     lambda ts: t if only(ts) else base.result(ts), base.nargs, base.helper,
                     lambda ts: [t] if only(ts) else (base.arg_types(ts) if base.arg_types else None),
                     lambda ts: None if only(ts) else (base.c_result(ts) if base.c_result else None))


# math.* of a float16: numba-cuda overloads these with the fp16 functions (a float16 result)
for _name, _c in (("sin", "hsin"), ("cos", "hcos"), ("exp", "hexp"), ("exp2", "hexp2"), ("log", "hlog"),
                  ("log2", "hlog2"), ("log10", "hlog10"), ("sqrt", "hsqrt"), ("tanh", "htanh"), ("floor", "hfloor"),
                  ("ceil", "hceil"), ("trunc", "htrunc"), ("fabs", "__habs")):
    TABLE[f"math.{_name}"] = _overloaded_for(TABLE[f"math.{_name}"], T.FLOAT16, _c)

# numba.cuda.bf16: cuda_bf16.h's functions on __nv_bfloat16, which numba-cuda binds one for one (its public names,
# `hadd`, `int32_to_bfloat16_rn`, and the binding module's own, `__hadd`, `__int2bfloat16_rn`)
_BF16_WORDS = {"int8": "char", "uint8": "uchar", "int16": "short", "uint16": "ushort", "int32": "int",
               "uint32": "uint", "int64": "ll", "uint64": "ull", "float32": "float", "float64": "double"}
_BF16_TYPES = {c: T.scalar_by_name(n) for n, c in _BF16_WORDS.items()}


def _bf16(numba_names, c, result, args):
    for key in numba_names:
        _add(key, c, _fixed(result), len(args), helper="bf16", arg_types=(lambda a: lambda ts: list(a))(args))


def _bf16_keys(public, raw):
    return [f"cuda.bf16.{public}", f"cuda.bf16.{raw.lstrip('_')}", f"cuda._internal.cuda_bf16.{raw}"]


_B = T.BFLOAT16
for _name, _n in (("habs", 1), ("hneg", 1), ("hadd", 2), ("hsub", 2), ("hmul", 2), ("hdiv", 2), ("hadd_rn", 2),
                  ("hsub_rn", 2), ("hmul_rn", 2), ("hadd_sat", 2), ("hsub_sat", 2), ("hmul_sat", 2), ("hfma", 3),
                  ("hfma_sat", 3), ("hfma_relu", 3), ("hmax", 2), ("hmin", 2), ("hmax_nan", 2), ("hmin_nan", 2)):
    _bf16(_bf16_keys(_name, f"__{_name}"), f"__{_name}", _B, [_B] * _n)
for _name in ("heq", "hne", "hge", "hgt", "hle", "hlt", "hequ", "hneu", "hgeu", "hgtu", "hleu", "hltu", "hisnan"):
    _bf16(_bf16_keys(_name, f"__{_name}"), f"__{_name}", T.BOOL, [_B] * (1 if _name == "hisnan" else 2))
_bf16(_bf16_keys("hisinf", "__hisinf"), "__hisinf", T.INT32, [_B])  # -1, 0 or 1, as cuda_bf16.h returns
for _name in ("htrunc", "hceil", "hfloor", "hrint", "hsqrt", "hrsqrt", "hrcp", "hlog", "hlog2", "hlog10", "hcos",
              "hsin", "hexp", "hexp2", "hexp10", "htanh", "htanh_approx"):
    _bf16(_bf16_keys(_name, _name), _name, _B, [_B])
_bf16(_bf16_keys("float32_to_bfloat16", "__float2bfloat16"), "__float2bfloat16", _B, [T.FLOAT32])
_bf16(_bf16_keys("float64_to_bfloat16", "__double2bfloat16"), "__double2bfloat16", _B, [T.FLOAT64])
_bf16(_bf16_keys("bfloat16_to_float32", "__bfloat162float"), "__bfloat162float", T.FLOAT32, [_B])
for _numba, _word in _BF16_WORDS.items():
    _t = _BF16_TYPES[_word]
    for _mode in ("rn", "rz", "rd", "ru"):
        if _word == "float" or _word not in ("char", "uchar", "double"):
            _c = f"__{_word}2bfloat16_{_mode}"
            _bf16(_bf16_keys(f"{_numba}_to_bfloat16_{_mode}", _c), _c, _B, [_t])
        if _word not in ("float", "double") and (_mode == "rz" or _word not in ("char", "uchar")):
            _c = f"__bfloat162{_word}_{_mode}"
            _bf16(_bf16_keys(f"bfloat16_to_{_numba}_{_mode}", _c), _c, _t, [_B])
for _numba, _word in (("int16", "short"), ("uint16", "ushort")):
    _t = _BF16_TYPES[_word]
    _bf16(_bf16_keys(f"bfloat16_as_{_numba}", f"__bfloat16_as_{_word}"), f"__bfloat16_as_{_word}", _t, [_B])
    _bf16(_bf16_keys(f"{_numba}_as_bfloat16", f"__{_word}_as_bfloat16"), f"__{_word}_as_bfloat16", _B, [_t])
# math.* of a bfloat16: numba-cuda's bf16 module overloads these with the h functions (a bfloat16 result)
for _name in ("trunc", "ceil", "floor", "sqrt", "log", "log10", "cos", "sin", "tanh", "exp", "exp2"):
    TABLE[f"math.{_name}"] = _overloaded_for(TABLE[f"math.{_name}"], T.BFLOAT16, f"h{_name}")

# numba-cuda's FP8 conversion functions (numba.cuda._internal.cuda_fp8): cuda_fp8.h's, returning the 8-bit storage;
# the enums are passed as their integers (templates/n2c_helpers.cuh, section fp8)
for _name, _t in (("cvt_float_to_fp8", T.FLOAT32), ("cvt_double_to_fp8", T.FLOAT64),
                  ("cvt_float_to_e8m0", T.FLOAT32), ("cvt_double_to_e8m0", T.FLOAT64)):
    _add(f"cuda._internal.cuda_fp8.{_name}", f"n2c::{_name}", _fixed(T.UINT8), 3, helper="fp8",
         arg_types=(lambda t: lambda ts: [t, T.INT32, T.INT32])(_t))
for _name in ("cvt_bfloat16raw_to_fp8", "cvt_bfloat16raw_to_e8m0"):
    _add(f"cuda._internal.cuda_fp8.{_name}", f"n2c::{_name}", _fixed(T.UINT8), 3, helper="fp8",
         arg_types=lambda ts: [T.BF16RAW, T.INT32, T.INT32])
_add("cuda._internal.cuda_fp8.cvt_e8m0_to_bf16raw", "__nv_cvt_e8m0_to_bf16raw", _fixed(T.BF16RAW), 1, helper="fp8",
     arg_types=lambda ts: [T.UINT8])

ATOMICS = {
    # Numba name: (CUDA function or n2c helper, helper section, accepted element kinds)
    "add": ("n2c::atomic_add", "atomic_add", "iuf"),
    "sub": ("n2c::atomic_sub", "atomic_sub", "iuf"),
    "max": ("n2c::atomic_max", "atomic_max", "iuf"),
    "min": ("n2c::atomic_min", "atomic_min", "iuf"),
    "nanmax": ("n2c::atomic_nanmax", "atomic_max", "iuf"),  # of an integer: max (numba-cuda compiles it)
    "nanmin": ("n2c::atomic_nanmin", "atomic_min", "iuf"),
    "and_": ("n2c::atomic_and", "atomic_bits", "iu"),
    "or_": ("n2c::atomic_or", "atomic_bits", "iu"),
    "xor": ("n2c::atomic_xor", "atomic_bits", "iu"),
    "exch": ("n2c::atomic_exch", "atomic_exch", "iuf"),
    "inc": ("n2c::atomic_inc", "atomic_inc", "u"),
    "dec": ("n2c::atomic_dec", "atomic_inc", "u"),
}

BUILTIN_DIM3 = {"cuda.threadIdx": "threadIdx", "cuda.blockIdx": "blockIdx", "cuda.blockDim": "blockDim",
                "cuda.gridDim": "gridDim"}


#: Python's operator module (a test's `op` given operator.add): the operator each names, as the IR spells it
OPERATOR_MODULE = {
    **{f"operator.{name}": ("binary", op) for name, op in (
        ("add", "+"), ("sub", "-"), ("mul", "*"), ("truediv", "/"), ("floordiv", "//"), ("mod", "%"),
        ("pow", "**"), ("lshift", "<<"), ("rshift", ">>"), ("and_", "&"), ("or_", "|"), ("xor", "^"))},
    # the in-place forms: on numbers (all a kernel has) they return the result and change nothing
    **{f"operator.i{name.rstrip('_')}": ("binary", op) for name, op in (
        ("add", "+"), ("sub", "-"), ("mul", "*"), ("truediv", "/"), ("floordiv", "//"), ("mod", "%"),
        ("pow", "**"), ("lshift", "<<"), ("rshift", ">>"), ("and_", "&"), ("or_", "|"), ("xor", "^"))},
    **{f"operator.{name}": ("compare", op) for name, op in (
        ("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">="), ("eq", "=="), ("ne", "!="))},
    **{f"operator.{name}": ("unary", op) for name, op in (("neg", "-"), ("pos", "+"), ("invert", "~"),
                                                          ("not_", "not"))},
}


def lookup(key: str) -> Intrinsic | None:
    return TABLE.get(key)


# Not Numba spellings: what the translator itself calls. A row view's index (`r = a[i]`) wraps around as Numba's
# does unless the legalizer proves it non-negative, where it is the index itself.
WRAP_INDEX = Intrinsic("n2c.wrap", "n2c::wrap", lambda ts: T.INT64, (2, 2), helper="wrap",
                       arg_types=lambda ts: [T.INT64, T.INT64])
# A raise (or a failed assert) in a device function: the thread ends there, as Numba's exception status makes every
# caller return in turn, the kernel too (not a key any Python spelling reaches).
EXIT_THREAD = Intrinsic("n2c.exit_thread", "n2c::exit_thread", lambda ts: T.VOID, (0, 0), helper="exit_thread")
# A slice's bound that may be negative (`a[:-1]`, `a[b[k]:]`), normalised as Python's slice does (the step, when
# given, says where one before the first element clips to), unless the legalizer proves it non-negative.
SLICE_BOUND = Intrinsic("n2c.slice_bound", "n2c::slice_bound", lambda ts: T.INT64, (2, 3), helper="slice_bound",
                        arg_types=lambda ts: [T.INT64] * len(ts))
