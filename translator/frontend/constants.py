"""module-level expressions -> constant values (ints, floats, tuples, typed scalars, arrays), never by running them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import math

import libcst as cst

from ..ir import typesys as T

if TYPE_CHECKING:
    from .info import ModuleInfo
from .names import dotted, resolve, scalar_type_of_name
from .scan import find_nodes
from .values import (ARRAY_METHODS, BINOPS, CONSTANT_MEMORY_BYTES, MAX_CONST_ELEMENTS, NP_MAKERS, NP_SCALAR_FUNCTIONS,
                     NUMPY_REFUSALS, ConstArray, ConstEvalError, DeviceArray, TimeDelta, Typed, array_op, dtype_of, from_numpy_value, numpy_call,
                     numpy_method)

__all__ = ["CONSTANT_MEMORY_BYTES", "CONFIG_CONSTANTS", "MATH_CONSTANTS", "reads_argv", "ConstArray", "ConstEvalError", "DeviceArray",
           "TimeDelta", "Typed", "const_eval"]


_COMPARES = {
    cst.LessThan: lambda a, b: a < b, cst.LessThanEqual: lambda a, b: a <= b, cst.GreaterThan: lambda a, b: a > b,
    cst.GreaterThanEqual: lambda a, b: a >= b, cst.Equal: lambda a, b: a == b, cst.NotEqual: lambda a, b: a != b,
}
# Settings Numba reads from its configuration: numba2cuda translates for the GPU, never for the simulator.
CONFIG_CONSTANTS = {"numba.config.ENABLE_CUDASIM": False, "cuda.config.ENABLE_CUDASIM": False,
                    "numba.core.config.ENABLE_CUDASIM": False, "cuda.core.config.ENABLE_CUDASIM": False,
                    "cuda.simulator_mode": False}
# A script's settings from its command line (`N = 8 if len(sys.argv) < 2 else int(sys.argv[1])`) are read as when
# it runs with no arguments, `python FILE`: the values its author gave as the defaults. Binder says so in a note.
SCRIPT_ARGV = ("FILE",)
# Libraries of published constants (physical constants, CODATA): read by importing the library itself, which
# runs none of the user's code; a kernel sees the number Numba would bake in.
CONSTANT_LIBRARIES = ("scipy.constants.",)


def library_constant(canon: str | None, keys: tuple = ()):
    """The number CANON (`scipy.constants.c`) names in an installed constants library, or, with KEYS, the number
    at those keys of a table it names (`physical_constants[name][0]`), else None."""
    if not canon or not canon.startswith(CONSTANT_LIBRARIES):
        return None
    import importlib

    module, _, name = canon.rpartition(".")
    try:
        value = getattr(importlib.import_module(module), name)
        for key in keys:
            value = value[key]
    except (ImportError, AttributeError, KeyError, IndexError, TypeError):
        return None
    return value if type(value) in (int, float) else None


# Functions of constants that are safe to evaluate here: pure, of numbers, in the interpreter's own libraries.
_MATH_FUNCTIONS = {"sqrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "atan", "atan2", "floor", "ceil",
                   "pow", "fabs", "hypot", "isqrt", "log1p", "expm1", "trunc", "gcd", "prod", "radians", "degrees"}
_BUILTINS = {"len", "min", "max", "abs", "round", "bool", "sum", "divmod"}
MATH_CONSTANTS = {"math.pi": math.pi, "math.e": math.e, "math.tau": math.tau, "math.inf": math.inf,
                  "math.nan": math.nan, "np.pi": math.pi, "np.e": math.e, "np.inf": math.inf, "np.nan": math.nan,
                  "cmath.pi": math.pi, "cmath.e": math.e, "cmath.tau": math.tau, "cmath.inf": math.inf,
                  "cmath.nan": math.nan, "cmath.infj": complex(0, math.inf), "cmath.nanj": complex(0, math.nan),
                  # CuPy's are NumPy's, so a kernel may read them where CuPy is not installed
                  "cupy.pi": math.pi, "cupy.e": math.e, "cupy.inf": math.inf, "cupy.nan": math.nan,
                  # the enums numba-cuda's FP8 conversions take (IntEnums, which Numba reads as their integers)
                  "cuda._internal.cuda_fp8.saturation_t.NOSAT": 0, "cuda._internal.cuda_fp8.saturation_t.SATFINITE": 1,
                  "cuda._internal.cuda_fp8.fp8_interpretation_t.E4M3": 0,
                  "cuda._internal.cuda_fp8.fp8_interpretation_t.E5M2": 1,
                  **{f"cuda.bindings.runtime.cudaRoundMode.{m}": k for k, m in enumerate(
                      ("cudaRoundNearest", "cudaRoundZero", "cudaRoundPosInf", "cudaRoundMinInf"))}}


def const_eval(info: ModuleInfo, node, local_consts: dict | None = None):
    """Evaluate a module-level constant expression without executing anything. A value Python or NumPy refuses to
    compute (`np.array(dims, dtype=np.int16)` of a `dims = None` set only when the program runs) is no constant."""
    try:
        return _evaluate(info, node, local_consts)
    except NUMPY_REFUSALS as exc:
        raise ConstEvalError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None


def _evaluate(info: ModuleInfo, node, local_consts: dict | None = None):
    scope = dict(info.constants)
    if local_consts:
        scope.update(local_consts)
    if isinstance(node, cst.Integer):
        return node.evaluated_value
    if isinstance(node, cst.Float):
        return node.evaluated_value
    if isinstance(node, cst.Imaginary):
        return node.evaluated_value
    if isinstance(node, cst.Name):
        if node.value in ("True", "False"):
            return node.value == "True"
        if node.value == "None":
            return None
        if node.value in scope:
            return scope[node.value]
        if resolve(info, node) in CONFIG_CONSTANTS:
            return CONFIG_CONSTANTS[resolve(info, node)]
        if resolve(info, node) in MATH_CONSTANTS:  # from math import pi
            return MATH_CONSTANTS[resolve(info, node)]
        value = library_constant(resolve(info, node))  # from scipy.constants import c
        if value is not None:
            return value
        raise ConstEvalError(node.value)
    if isinstance(node, cst.Attribute):
        canon = resolve(info, node)
        if canon == "sys.argv":
            return SCRIPT_ARGV
        if canon in MATH_CONSTANTS:
            return MATH_CONSTANTS[canon]
        if canon in CONFIG_CONSTANTS:
            return CONFIG_CONSTANTS[canon]
        value = library_constant(canon)
        if value is not None:
            return value
        name = dotted(node)
        if name in scope:  # `params.N` of a sibling module read by import
            return scope[name]
        if node.attr.value == "itemsize":  # pygdf's `mask_bitsize = mask_dtype.itemsize * 8`
            size = _itemsize(info, node.value, local_consts)
            if size is not None:
                return size
        if isinstance(node.value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and name not in info.aliases:
            try:
                base = const_eval(info, node.value, local_consts)
            except ConstEvalError:
                raise ConstEvalError(name or "attribute") from None
            return _attribute(base, node.attr.value)
        raise ConstEvalError(name or "attribute")
    if isinstance(node, cst.List):  # Numba rejects a global list in a kernel; np.array([...]) reads one itself
        raise ConstEvalError("list")
    if isinstance(node, cst.Tuple):
        return tuple(const_eval(info, el.value, local_consts) for el in node.elements)
    if isinstance(node, cst.UnaryOperation):
        v = const_eval(info, node.expression, local_consts)
        if isinstance(node.operator, cst.Not):
            return not _plain(v)
        if isinstance(v, ConstArray):
            return array_op(node.operator, v)
        v = v.value if isinstance(v, Typed) else v
        if isinstance(node.operator, cst.Minus):
            return -v
        if isinstance(node.operator, cst.Plus):
            return +v
        return ~v
    if isinstance(node, cst.BinaryOperation) and type(node.operator) in BINOPS:
        a = const_eval(info, node.left, local_consts)
        b = const_eval(info, node.right, local_consts)
        if isinstance(a, ConstArray) or isinstance(b, ConstArray):
            return array_op(node.operator, a, b)
        a = a.value if isinstance(a, Typed) else a
        b = b.value if isinstance(b, Typed) else b
        if isinstance(a, tuple) or isinstance(b, tuple):
            if isinstance(node.operator, cst.Add) and isinstance(a, tuple) and isinstance(b, tuple):
                if len(a) + len(b) > MAX_ELEMENTS:
                    raise ConstEvalError("tuple too long")
                return a + b
            raise ConstEvalError("tuple arithmetic")
        _check_size(node.operator, a, b)
        try:
            return BINOPS[type(node.operator)](a, b)
        except (ZeroDivisionError, OverflowError, ValueError, TypeError) as exc:
            raise ConstEvalError(str(exc)) from None
    if isinstance(node, cst.Comparison):
        left = _plain(const_eval(info, node.left, local_consts))
        for target in node.comparisons:
            right = _plain(const_eval(info, target.comparator, local_consts))
            op = type(target.operator)
            if op in _COMPARES:
                ok = _COMPARES[op](left, right)
            elif op in (cst.Is, cst.IsNot) and (left is None or right is None):
                ok = (left is right) == (op is cst.Is)
            else:
                raise ConstEvalError("comparison")
            if not isinstance(ok, bool):
                raise ConstEvalError("comparison of arrays")
            if not ok:
                return False
            left = right
        return True
    if isinstance(node, cst.BooleanOperation):
        left = _plain(const_eval(info, node.left, local_consts))
        if isinstance(node.operator, cst.And):
            return const_eval(info, node.right, local_consts) if left else left
        return left if left else const_eval(info, node.right, local_consts)
    if isinstance(node, cst.IfExp):
        test = _plain(const_eval(info, node.test, local_consts))
        return const_eval(info, node.body if test else node.orelse, local_consts)
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        entry = _dict_entry(info, node, local_consts)
        if entry is not None:  # `_DEFAULTS["THRESHOLD"]` of a module-level dict literal (stumpy's config)
            return const_eval(info, entry, local_consts)
        published = _library_entry(info, node)
        if published is not None:  # `physical_constants['classical electron radius'][0]` (fbpic)
            return published
        seq = const_eval(info, node.value, local_consts)
        idx = const_eval(info, node.slice[0].slice.value, local_consts)
        idx = idx.value if isinstance(idx, Typed) else idx
        if isinstance(seq, tuple) and isinstance(idx, int) and -len(seq) <= idx < len(seq):
            return seq[idx]
        raise ConstEvalError("subscript")
    if isinstance(node, cst.Call):
        return _const_call(info, node, local_consts)
    raise ConstEvalError(type(node).__name__)


def _library_entry(info: ModuleInfo, node: cst.Subscript):
    """A number of a constants library's table, by literal keys (`physical_constants[name][0]`: scipy's CODATA
    values as (value, unit, uncertainty)), else None."""
    keys = []
    while isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        key = node.slice[0].slice.value
        if isinstance(key, cst.SimpleString):
            keys.append(key.evaluated_value)
        elif isinstance(key, cst.Integer):
            keys.append(int(key.value, 0))
        else:
            return None
        node = node.value
    if not isinstance(node, (cst.Name, cst.Attribute)):
        return None
    return library_constant(resolve(info, node), tuple(reversed(keys)))


def _dict_entry(info: ModuleInfo, node: cst.Subscript, local_consts):
    """The value expression of `D[key]` where D is a dict literal bound once and never stored into, else None.
    Only that entry is evaluated: the others may be anything (sets, np.finfo(...).max)."""
    if not isinstance(node.value, cst.Name):
        return None
    bound = info.value_nodes.get(node.value.value)
    if not isinstance(bound, cst.Dict):
        return None
    index = node.slice[0].slice.value
    key = index.evaluated_value if isinstance(index, cst.SimpleString) else const_eval(info, index, local_consts)
    name = node.value.value

    def stores_into(n) -> bool:
        return isinstance(n, cst.AssignTarget) and isinstance(n.target, cst.Subscript) \
            and isinstance(n.target.value, cst.Name) and n.target.value.value == name

    for stored in find_nodes(info.module, stores_into):
        raise ConstEvalError(f"'{name}' is changed in place (line {info.reporter.location(stored).line})")
    for el in bound.elements:
        if isinstance(el, cst.DictElement) and isinstance(el.key, (cst.SimpleString, cst.Integer)) \
                and el.key.evaluated_value == key:
            return el.value
    return None


#: beyond these, a constant is of no use to a kernel (C has no wider integer) and computing it could take
#: as long as the user likes: 10 ** 10 ** 10, or a tuple doubled line after line
MAX_INT_BITS = 4096
MAX_ELEMENTS = 100_000


def _check_size(operator, a, b) -> None:
    """Refuse integer arithmetic whose result would pass MAX_INT_BITS, before computing it."""
    if not (isinstance(a, int) and isinstance(b, int)):
        return
    bits = max(abs(a).bit_length(), abs(b).bit_length())
    if isinstance(operator, cst.Power):
        grows = b > 0 and abs(a) > 1 and abs(a).bit_length() * b > MAX_INT_BITS
    elif isinstance(operator, cst.LeftShift):
        grows = b > MAX_INT_BITS or bits + max(b, 0) > MAX_INT_BITS
    elif isinstance(operator, cst.Multiply):
        grows = abs(a).bit_length() + abs(b).bit_length() > MAX_INT_BITS
    else:
        grows = bits > MAX_INT_BITS
    if grows:
        raise ConstEvalError("integer too large")


def _sequence(info: ModuleInfo, node, local_consts):
    """np.array's argument: nested lists and tuples of constants, as nested tuples."""
    if isinstance(node, (cst.List, cst.Tuple)):
        if len(node.elements) > MAX_ELEMENTS:
            raise ConstEvalError("array too long")
        return tuple(_sequence(info, el.value, local_consts) for el in node.elements)
    return const_eval(info, node, local_consts)


def _plain(v):
    if isinstance(v, Typed):
        return v.value
    if isinstance(v, ConstArray):
        raise ConstEvalError("the truth value of an array")
    return v


def _itemsize(info: ModuleInfo, node, local_consts, depth: int = 0) -> int | None:
    """The bytes of one element of the dtype NODE gives: `np.dtype(np.uint8)`, a NumPy scalar (`np.float32(0)`), a
    constant array, or a module name bound once to one of these; else None."""
    if isinstance(node, cst.Name) and depth < 4 and node.value in info.value_nodes and \
            node.value not in info.constants:
        return _itemsize(info, info.value_nodes[node.value], local_consts, depth + 1)
    if isinstance(node, cst.Call) and resolve(info, node.func) == "np.dtype" and len(node.args) == 1:
        scalar = dtype_of(info, node.args[0].value)
        return None if scalar is None or scalar.kind == "r" else scalar.bits // 8
    try:
        value = const_eval(info, node, local_consts)
    except ConstEvalError:
        return None
    if isinstance(value, Typed):
        return value.type.bits // 8
    return value.dtype.bits // 8 if isinstance(value, ConstArray) else None


def _attribute(base, attr: str):
    if isinstance(base, DeviceArray) and attr in ("shape", "size", "ndim"):
        return {"shape": base.shape, "size": math.prod(base.shape), "ndim": len(base.shape)}[attr]
    if isinstance(base, ConstArray):
        if attr == "shape":
            return base.shape
        if attr == "size":
            return len(base.values)
        if attr == "ndim":
            return len(base.shape)
        if attr == "nbytes":
            return base.nbytes
        if attr == "T":
            return from_numpy_value(base.to_numpy().T.copy())
    raise ConstEvalError(f".{attr}")


def _const_call(info: ModuleInfo, node: cst.Call, local_consts):
    canon = resolve(info, node.func) or (node.func.value if isinstance(node.func, cst.Name) else None)
    args = [a for a in node.args if a.keyword is None]
    if any(a.star for a in node.args):
        raise ConstEvalError("a call with *args")
    kwargs = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    scalar = scalar_type_of_name(canon)
    if scalar is not None and len(args) == 1 and isinstance(args[0].value, (cst.List, cst.Tuple)) and \
            canon.startswith("np."):  # np.float64([1.0, np.nan]) (numba-cuda's tests): an array of that type
        flat, shape = _flatten(_sequence(info, args[0].value, local_consts))
        if len(flat) > MAX_CONST_ELEMENTS:
            raise ConstEvalError(f"an array of {len(flat)} elements")
        return ConstArray([_convert(v, scalar) for v in flat], scalar, shape)
    if scalar is not None and len(args) == 1:
        v = const_eval(info, args[0].value, local_consts)
        if isinstance(v, TimeDelta) and scalar.kind in "iu":  # np.int64(np.timedelta64(3600, "s")): the count
            return Typed(_convert(v.count, scalar), scalar)
        if isinstance(v, ConstArray):
            return ConstArray([_convert(x, scalar) for x in v.values], scalar, v.shape)
        return Typed(_convert(v.value if isinstance(v, Typed) else v, scalar), scalar)
    if canon == "float" and len(args) == 1 and isinstance(args[0].value, cst.SimpleString):
        text = args[0].value.evaluated_value
        if isinstance(text, str) and text.strip().lower().lstrip("+-") in ("inf", "infinity", "nan"):
            return float(text)
        raise ConstEvalError("float of a string")
    if canon in ("int", "float") and len(args) == 1:
        v = const_eval(info, args[0].value, local_consts)
        return (int if canon == "int" else float)(v.value if isinstance(v, Typed) else v)
    if canon in ("np.array", "np.asarray") and args and (
            isinstance(args[0].value, (cst.List, cst.Tuple))
            or not isinstance(const_eval(info, args[0].value, local_consts), ConstArray)):
        values = _sequence(info, args[0].value, local_consts)
        dtype_node = kwargs.get("dtype") or (args[1].value if len(args) > 1 else None)
        dtype = dtype_of(info, dtype_node) if dtype_node is not None else None
        flat, shape = _flatten(values)
        if dtype is None:  # NumPy's choice: float64 for an empty list, bool only when every item is one
            dtype = T.BOOL if flat and all(isinstance(v, bool) for v in flat) else \
                T.INT64 if flat and not any(isinstance(v, float) for v in flat) else T.FLOAT64
        if len(flat) > MAX_CONST_ELEMENTS:
            raise ConstEvalError(f"an array of {len(flat)} elements")
        return ConstArray([_convert(v, dtype) for v in flat], dtype, shape)
    if canon in ("np.ascontiguousarray", "np.asfortranarray") and len(args) == 1:
        # a copy: the same shape and values; a baked array is read by index, so its memory order is not seen
        value = const_eval(info, args[0].value, local_consts)
        if isinstance(value, ConstArray):
            return value
        raise ConstEvalError(canon)
    if canon == "cuda.to_device" and len(args) == 1:
        value = const_eval(info, args[0].value, local_consts)
        if isinstance(value, ConstArray):
            return DeviceArray(value.shape, value.dtype)
        raise ConstEvalError(canon)
    if canon == "len" and len(args) == 1:
        value = const_eval(info, args[0].value, local_consts)
        if isinstance(value, (ConstArray, DeviceArray)) and value.shape:
            return value.shape[0]
    if canon == "np.timedelta64" and len(args) == 2 and not kwargs:
        first, unit = args[0].value, args[1].value
        value = first.evaluated_value if isinstance(first, cst.SimpleString) else const_eval(info, first, local_consts)
        if isinstance(unit, cst.SimpleString) and isinstance(value, (int, str)) and str(value).lstrip("-").isdigit():
            return TimeDelta(int(value), unit.evaluated_value)
        raise ConstEvalError(canon)
    if canon in _BUILTINS or (canon or "").startswith("math.") and canon[5:] in _MATH_FUNCTIONS:
        import builtins

        fn = getattr(builtins, canon) if canon in _BUILTINS else getattr(math, canon[5:])
        values = [plain_or_tuple(const_eval(info, a.value, local_consts)) for a in args]
        if kwargs or len(values) > 3:
            raise ConstEvalError(canon)
        try:
            result = fn(*values)
        except (TypeError, ValueError, OverflowError, ZeroDivisionError) as exc:
            raise ConstEvalError(str(exc)) from None
        return from_numpy_value(result) if not isinstance(result, tuple) else result
    if (canon or "").startswith("np.") and canon[3:] in NP_MAKERS | NP_SCALAR_FUNCTIONS:
        return numpy_call(const_eval, info, canon[3:], args, kwargs, local_consts)
    if isinstance(node.func, cst.Attribute) and node.func.attr.value in ARRAY_METHODS and canon is None:
        base = const_eval(info, node.func.value, local_consts)
        if isinstance(base, ConstArray):
            return numpy_method(const_eval, info, base, node.func.attr.value, args, kwargs, local_consts)
    raise ConstEvalError(canon or "call")


def plain_or_tuple(v):
    if isinstance(v, tuple):
        return tuple(plain_or_tuple(x) for x in v)
    return _plain(v)


def _flatten(values):
    if not isinstance(values, tuple):
        return [values.value if isinstance(values, Typed) else values], ()
    parts = [_flatten(v) for v in values]
    shapes = {p[1] for p in parts}
    if len(shapes) > 1:
        raise ConstEvalError("ragged array")
    inner = shapes.pop() if shapes else ()
    return [x for p in parts for x in p[0]], (len(values),) + inner


def _convert(value, scalar: T.Scalar):
    import numpy as np  # NumPy does the rounding, so float32 constants match np.float32 exactly

    if scalar.kind == "b":
        return bool(value)
    if isinstance(value, tuple):
        raise ConstEvalError("a tuple where a number was expected")
    with np.errstate(all="ignore"):
        arr = np.array(value).astype(np.dtype(scalar.name if scalar.name != "bool" else "bool"))
    return arr.item()


def reads_argv(info: ModuleInfo, node) -> bool:
    """Whether evaluating NODE read sys.argv (taken as a run without arguments)."""
    return bool(find_nodes(node, lambda n: isinstance(n, cst.Attribute) and resolve(info, n) == "sys.argv",
                           first=True))


def installed(module: str) -> bool:
    """Whether MODULE's top-level package can be imported where numba2cuda runs (not importing it)."""
    import importlib.util

    try:
        return importlib.util.find_spec(module.split(".")[0]) is not None
    except (ImportError, ValueError):
        return False
