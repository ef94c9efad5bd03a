"""Python scalars in the CUDA simulator -> the values Numba computes on the GPU: each operation typed by Numba.

Loaded by reference.py (by path: it imports nothing from numba2cuda) in the process that runs the user's
module under NUMBA_ENABLE_CUDASIM=1. sim_fidelity.py rewrites every kernel and device function so that
each arithmetic operator, comparison, unary operator, builtin (min, max, abs, round, pow) and math.*
call goes through the functions here, which

* type the operation with Numba's own typing context (numba.core.typing.Context: a Python int is
  int64, a Python float float64, int8 + int8 is int64, int16 * float32 float32, float32 * float64
  float64, max(int32, float32) float64), where the simulator follows NumPy 2's promotion (NEP 50: a
  Python float with a float32 stays float32, int8 + int8 wraps in int8);
* compute it in those types with Numba's semantics under its NumPy error model: integers wrap, x // 0
  and x % 0 are 0, MIN // -1 is 0, float // and % follow Python, float ** int is repeated squaring,
  float ** float and math.* call the C library's function of the operands' precision (expf for
  float32; the CPU runtime calls the same, CUDA's are within their documented ULP error); complex **
  anything is numba-cuda's cpow, never NumPy's products for small integer exponents.

Where Numba cannot type an operation (tuples, None), Python's own operator runs.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import operator
import threading

import numpy as np

BIN_OPS = (operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
           operator.pow, operator.lshift, operator.rshift, operator.and_, operator.or_, operator.xor)
CMP_OPS = (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne)
UN_OPS = (operator.neg, operator.pos, operator.invert)

_CTX = None
_NB = {}
# simulator threads type operations concurrently: each new implementation is made under this lock (and
# the typing context exists before any kernel runs: see sim_fidelity.install)
_LOCK = threading.RLock()
_UN, _CALL = {}, {}
_LIBM = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")


def _context():
    global _CTX
    if _CTX is not None:
        return _CTX
    with _LOCK:
        if _CTX is not None:
            return _CTX
        from numba.core import types
        from numba.core.typing.context import Context

        ctx = Context()
        ctx.refresh()
        for name in ("boolean", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                     "float32", "float64", "complex64", "complex128"):
            nt = getattr(types, name)
            _NB[np.dtype("bool" if name == "boolean" else name).type] = nt
        _NB[bool], _NB[int], _NB[float], _NB[complex] = types.boolean, types.int64, types.float64, types.complex128
        _CTX = ctx
        return _CTX


def _nbtype(t):
    _context()
    return _NB.get(t)


def _dtype(nbtype) -> np.dtype | None:
    name = str(nbtype)
    try:
        return np.dtype("bool" if name == "bool" else name)
    except TypeError:
        return None


def _signature(fn, types):
    try:
        sig = _context().resolve_function_type(fn, types, {})
    except Exception:  # noqa: BLE001 - Numba's typing raises many kinds; any means "not typed"
        return None
    return sig


def typed_cpu(dispatcher):
    """An @njit helper as a kernel calls it in the simulator (numba-cuda compiles it as a device function): its
    result has the type Numba's typing gives it, not the Python float or int boxing turns it into (a float32
    result read as float64 would change every operation after it)."""
    from numba import typeof

    def call(*args):
        result = dispatcher(*args)
        cres = dispatcher.overloads.get(tuple(typeof(a) for a in args))
        dtype = _dtype(cres.signature.return_type) if cres is not None else None
        return dtype.type(result) if dtype is not None and np.isscalar(result) else result
    return call


def _wrapper(dtype: np.dtype):
    """Python int -> the dtype's scalar, wrapping as the GPU's integer arithmetic does."""
    if dtype.kind == "b":
        return lambda v: np.bool_(v)
    if dtype.kind == "f":
        return dtype.type
    bits = dtype.itemsize * 8
    mask, half, scalar = (1 << bits) - 1, 1 << (bits - 1), dtype.type
    if dtype.kind == "u":
        return lambda v: scalar(int(v) & mask)

    def wrap(v):
        v = int(v) & mask
        return scalar(v - (mask + 1) if v >= half else v)
    return wrap


def _ipow(base, exp, one):
    """base ** exp for an integer exp by repeated squaring, the products Numba computes."""
    e = int(exp)
    invert = e < 0
    e = -e if invert else e
    result = one
    while e:
        if e & 1:
            result = result * base
        e >>= 1
        if e:
            base = base * base
    return one / result if invert else result


def _libm(name: str, dtype: np.dtype, nargs: int):
    """The C library's NAME for float32 (NAMEf) or float64 operands, as a Python function."""
    fname = name + ("f" if dtype == np.float32 else "")
    ct = ctypes.c_float if dtype == np.float32 else ctypes.c_double
    try:
        fn = getattr(_LIBM, fname)
    except AttributeError:
        return None
    fn.restype, fn.argtypes = ct, [ct] * nargs
    scalar = dtype.type
    return lambda *a: scalar(fn(*(float(x) for x in a)))


def _cpow(R: np.dtype):
    """numba-cuda's cpow (CPython's _Py_c_pow) with every step in R's part precision and the C library. NumPy's
    complex power, which the simulator would run, multiplies for small integer exponents; numba-cuda never does
    (z ** 2 differs from z * z in the last bits on the H200)."""
    F = np.dtype(np.float32 if R == np.complex64 else np.float64)
    f = F.type
    hypot, power, atan2 = (_libm(n, F, 2) for n in ("hypot", "pow", "atan2"))
    exp, log, cos, sin = (_libm(n, F, 1) for n in ("exp", "log", "cos", "sin"))
    zero, one = f(0), f(1)

    def mul(a, b):  # all four products, as C's complex multiply
        return a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]

    def run(a, b):
        a, b = R.type(a), R.type(b)
        ar, ai, br, bi = f(a.real), f(a.imag), f(b.real), f(b.imag)
        if br == 0 and bi == 0:
            return R.type(1)
        if ar == 0 and br == 0:
            return R.type(0)
        with np.errstate(all="ignore"):
            vabs = hypot(ar, ai)
            length, at = power(vabs, br), atan2(ai, ar)
            phase = at * br
            if bi != 0:
                length = length / exp(at * bi)
                phase = phase + bi * log(vabs)
            unit = mul((sin(phase), zero), (zero, one))
            re, im = mul((length, zero), (cos(phase) + unit[0], zero + unit[1]))
        return R.type(complex(re, im))
    return run


_PY_INT_OPS = (operator.add, operator.sub, operator.mul, operator.and_, operator.or_, operator.xor)
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


def _py_int_op(op, wrap):
    """Two Python ints (thread indices, loop counters) stay Python ints while the result fits in int64."""
    def run(a, b):
        r = op(a, b)
        return r if _I64_MIN <= r <= _I64_MAX else wrap(r)
    return run


def _make_bin(op, ta, tb):
    na, nb = _nbtype(ta), _nbtype(tb)
    sig = _signature(op, (na, nb)) if na is not None and nb is not None else None
    if sig is None:
        return op
    A, B, R = _dtype(sig.args[0]), _dtype(sig.args[1]), _dtype(sig.return_type)
    if A is None or B is None or R is None:
        return op
    ca, cb = A.type, B.type
    if R.kind == "f":
        scalar = R.type
        if op is operator.pow:
            if B.kind in "iub":
                return lambda a, b: _ipow(scalar(a), b, scalar(1))
            power = _libm("pow", R, 2)
            return lambda a, b: power(a, b)
        if op in (operator.floordiv, operator.mod) and A.kind == "f":
            fn = np.floor_divide if op is operator.floordiv else np.remainder
            return lambda a, b: scalar(scalar(a) / scalar(b)) if scalar(b) == 0 and op is operator.floordiv \
                else scalar(fn(scalar(a), scalar(b)))
        if A.kind != "f" or B.kind != "f":  # int / int is a float division of the converted operands
            return lambda a, b: scalar(op(scalar(a), scalar(b)))
        if ta is tb is scalar:  # NumPy computes two scalars of one float type in that type, as Numba does
            return op
        return lambda a, b: scalar(op(ca(a), cb(b)))
    if R.kind == "c":  # complex: both operands made R (a real one with imaginary part 0), as Numba converts them
        scalar = R.type
        if op is operator.pow:
            return _cpow(R)
        return lambda a, b: scalar(op(scalar(a), scalar(b)))
    if R.kind == "b":
        return lambda a, b: np.bool_(op(bool(a), bool(b)))
    wrap = _wrapper(R)
    if ta is tb is int and R == np.int64 and op in _PY_INT_OPS:
        return _py_int_op(op, wrap)
    lo = -(1 << (R.itemsize * 8 - 1)) if R.kind == "i" else 0
    if op is operator.floordiv:
        return lambda a, b: wrap(0) if int(b) == 0 or (int(b) == -1 and int(a) == lo and lo) else wrap(int(a) // int(b))
    if op is operator.mod:
        return lambda a, b: wrap(0) if int(b) == 0 or int(b) == -1 else wrap(int(a) % int(b))
    if op is operator.pow:
        def ipow(a, b):
            a, b = int(a), int(b)
            if b < 0:
                return wrap(1 if a == 1 else ((-1 if b & 1 else 1) if a == -1 else 0))
            return wrap(pow(a, b, 1 << (R.itemsize * 8)))
        return ipow
    if op in (operator.lshift, operator.rshift):
        def shift(a, b):
            n, v = int(b), int(ca(a))
            if 0 <= n < 64:
                return wrap(op(v, n))
            return wrap(0 if op is operator.lshift or v >= 0 else -1)
        return shift
    return lambda a, b: wrap(op(int(a), int(b)))


class ThreadStops(Exception):
    """Numba raised in this thread (it cast a None, an Optional's, to a number): on the GPU the thread ends there
    and the launch goes on; the simulator would store NaN or fail the whole launch (sim_fidelity.py ends it)."""


def _none_operand(*_):
    raise ThreadStops("a None used as a number")


def _dispatcher(op, make):
    """op(a, b) through an implementation made once per pair of operand types (a None's: the thread ends)."""
    table = {}

    def run(a, b):
        try:
            return table[type(a), type(b)](a, b)
        except KeyError:
            with _LOCK:
                fn = table[type(a), type(b)] = _none_operand if a is None or b is None else \
                    make(op, type(a), type(b))
            return fn(a, b)
    return run


def _make_cmp(op, ta, tb):
    na, nb = _nbtype(ta), _nbtype(tb)
    sig = _signature(op, (na, nb)) if na is not None and nb is not None else None
    if sig is None:
        return op
    A, B = _dtype(sig.args[0]), _dtype(sig.args[1])
    if A is None or B is None:
        return op
    if ta in (int, float, bool) and tb in (int, float, bool):
        return op  # Python compares these exactly (as Numba's float64 conversions do, below 2**53)
    if A == B == np.float64:  # Python floats compare exactly what the float64 conversions would
        return lambda a, b: op(float(a), float(b))
    if A == B == np.int64 and ta in (int, np.int64) and tb in (int, np.int64):
        return lambda a, b: op(int(a), int(b))
    ca, cb = A.type, B.type
    return lambda a, b: bool(op(ca(a), cb(b)))


BIN = [None] * len(BIN_OPS)  # filled below, once _make_cmp exists
CMP = [None] * len(CMP_OPS)


def binop(i: int, a, b):
    return BIN[i](a, b)


def cmpop(i: int, a, b):
    return CMP[i](a, b)


BIN[:] = [_dispatcher(op, _make_bin) for op in BIN_OPS]
CMP[:] = [_dispatcher(op, _make_cmp) for op in CMP_OPS]


def is_(a, b) -> bool:
    """`a is b` as Numba compiles it: two booleans by value (numba-cuda's bool_is_impl; the simulator's np.True_
    is not Python's True), anything else by identity (None)."""
    if isinstance(a, (bool, np.bool_)) and isinstance(b, (bool, np.bool_)):
        return bool(a) == bool(b)
    return a is b


def chain(left, *rest):
    """left OP1 c1 OP2 c2 ...: each comparand a thunk, evaluated once and only as far as Python would."""
    for i in range(0, len(rest), 2):
        right = rest[i + 1]()
        if not cmpop(rest[i], left, right):
            return False
        left = right
    return True


def _make_un(op, ta):
    na = _nbtype(ta)
    sig = _signature(op, (na,)) if na is not None else None
    if sig is None:
        return op
    A, R = _dtype(sig.args[0]), _dtype(sig.return_type)
    if A is None or R is None:
        return op
    if R.kind == "f":
        return lambda a: R.type(op(R.type(a)))
    if R.kind == "b":
        return lambda a: np.bool_(not a) if op is operator.invert else np.bool_(op(bool(a)))
    wrap = _wrapper(R)
    return lambda a: wrap(op(int(a)))


def unop(i: int, a):
    op = UN_OPS[i]
    key = (i, type(a))
    fn = _UN.get(key)
    if fn is None:
        with _LOCK:
            fn = _UN[key] = _none_operand if a is None else _make_un(op, type(a))
    return fn(a)


# ---------------------------------------------------------------- builtins and math, typed by Numba

def _typed_call(fn, compute, args, typer=None):
    key = (fn, tuple(type(a) for a in args))
    f = _CALL.get(key)
    if f is None:
        with _LOCK:
            return _typed_call_slow(fn, compute, args, key, typer or _signature)
    return f(*args)


def _typed_call_slow(fn, compute, args, key, typer):
    f = _CALL.get(key)
    if f is None:
        types = tuple(_nbtype(type(a)) for a in args)
        sig = typer(fn, types) if all(t is not None for t in types) else None
        f = None
        if sig is not None:
            params = sig.args[0].types if len(sig.args) == 1 and hasattr(sig.args[0], "types") and len(args) > 1 \
                else sig.args
            casts = [_dtype(t) for t in params]
            R = _dtype(sig.return_type)
            if R is not None and all(c is not None for c in casts) and len(casts) == len(args):
                f = compute(R, casts)
        _CALL[key] = f = f or (lambda *a: fn(*a))
    return f(*args)


def _minmax(fn, pick):
    def compute(R, casts):
        cast = R.type

        def run(*a):
            best = cast(a[0])
            for x in a[1:]:
                x = cast(x)
                if pick(x, best):
                    best = x
            return best
        return run

    def call(*args, **kw):
        if len(args) < 2 or kw:
            return fn(*args, **kw)
        return _typed_call(fn, compute, args)
    return call


py_min = _minmax(min, lambda x, best: x < best)
py_max = _minmax(max, lambda x, best: x > best)


def py_abs(x):
    def compute(R, casts):
        if R.kind in "iu":
            wrap = _wrapper(R)
            return lambda a: wrap(abs(int(a)))
        return lambda a: R.type(abs(R.type(a)))
    return _typed_call(abs, compute, (x,))


def py_round(x, ndigits=None):
    if ndigits is not None or not isinstance(x, (float, np.floating)):
        return round(x) if ndigits is None else round(x, ndigits)
    return np.int64(np.rint(x)) if np.isfinite(x) else round(float(x))


def py_pow(a, b, mod=None):
    return pow(a, b, mod) if mod is not None else binop(6, a, b)


_CUDA_MATH = None


def _cuda_math_cases() -> dict:
    """{math function: its case lists} as numba-cuda declares them for the GPU (numba.cuda.cudamath), which
    numba.core's CPU typing does not follow: math.floor(float32) is a float32 there (an int64 on the CPU),
    math.fmod(float32, int8) a float32 (untyped on the CPU), math.pow(float32, int32) a float32."""
    global _CUDA_MATH
    if _CUDA_MATH is None:
        table = {}
        try:
            from numba.cuda import cudamath
        except ImportError:  # a numba-cuda without that module: the CPU typing stands in
            cudamath = None
        for fn, ty in getattr(getattr(cudamath, "registry", None), "globals", ()):
            table.setdefault(fn, []).extend(t.cases for t in ty.templates if getattr(t, "cases", None))
        _CUDA_MATH = table
    return _CUDA_MATH


def _math_signature(fn, types):
    for cases in _cuda_math_cases().get(fn, ()):
        sig = _context().resolve_overload(fn, cases, types, {})
        if sig is not None:
            return sig
    return _signature(fn, types)


class MathModule:
    """`math` as a kernel sees it on the GPU: every function typed by numba-cuda, computed by the C library."""

    _PRED = {"isnan", "isinf", "isfinite"}

    def __init__(self):
        self._cache = {}

    def __getattr__(self, name):
        real = getattr(math, name)
        if not callable(real):
            return real
        fn = self._cache.get(name)
        if fn is None:
            fn = self._cache[name] = self._make(name, real)
        return fn

    def _make(self, name, real):
        def compute(R, casts):
            if name in self._PRED or R.kind in "iub":
                return lambda *a: R.type(real(*(float(x) for x in a)))
            if name in ("degrees", "radians"):
                factor = R.type(180.0) / R.type(math.pi) if name == "degrees" else R.type(math.pi) / R.type(180.0)
                return lambda a: R.type(R.type(a) * factor)
            c_name = {"gamma": "tgamma", "fabs": "fabs"}.get(name, name)
            libm = _libm(c_name, R, len(casts))
            if libm is None:
                return lambda *a: R.type(real(*(float(x) for x in a)))
            return lambda *a: libm(*(c.type(x) for c, x in zip(casts, a)))

        def call(*args):
            try:
                return _typed_call(real, compute, args, _math_signature)
            except (ValueError, OverflowError):  # a domain error in Python is a NaN or Inf in C
                return np.float64("nan")
        return call


MATH = MathModule()
def py_range(*args):
    """range() of a float, which numba-cuda's math.ceil/floor give: Numba converts it to int64 (unsafely, toward
    zero), where Python's range raises TypeError."""
    return range(*(int(a) if isinstance(a, (float, np.floating)) else a for a in args))


BUILTINS = {"min": py_min, "max": py_max, "abs": py_abs, "round": py_round, "pow": py_pow, "range": py_range}
