"""module-level expressions -> constant values (ints, floats, tuples, typed scalars, arrays), never by running them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import math
from dataclasses import dataclass

import libcst as cst

from ..ir import typesys as T

if TYPE_CHECKING:
    from .info import ModuleInfo
from .names import dotted, resolve, scalar_type_of_name


@dataclass(frozen=True)
class Typed:
    """A constant with an explicit NumPy/Numba scalar type, such as np.float32(0.5)."""
    value: object
    type: T.Scalar


@dataclass
class ConstArray:
    values: list
    dtype: T.Scalar
    shape: tuple

    @property
    def nbytes(self) -> int:
        return len(self.values) * max(self.dtype.bits // 8, 1)

    def to_numpy(self):
        import numpy as np

        return np.array(self.values, dtype=_np_dtype(self.dtype)).reshape(self.shape)

    @staticmethod
    def from_numpy(arr) -> ConstArray:
        dtype = T.scalar_by_name(str(arr.dtype))
        if dtype is None:
            raise ConstEvalError(f"an array of {arr.dtype}")
        return ConstArray(arr.ravel().tolist(), dtype, tuple(int(d) for d in arr.shape))


#: __constant__ memory holds 64 KiB per module; a bigger module-level array must be passed as an argument
CONSTANT_MEMORY_BYTES = 64 * 1024
#: the most elements an array computed at translation time may have (it is written into the .cu)
MAX_CONST_ELEMENTS = CONSTANT_MEMORY_BYTES


def _np_dtype(scalar: T.Scalar):
    import numpy as np

    return np.dtype("bool" if scalar.kind == "b" else scalar.name)


@dataclass(frozen=True)
class TimeDelta:
    """np.timedelta64(count, unit): usable only through an integer cast (np.int64(...)), as kernels use it."""
    count: int
    unit: str


class ConstEvalError(Exception):
    pass


_BINOPS = {
    cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b, cst.Multiply: lambda a, b: a * b,
    cst.Divide: lambda a, b: a / b, cst.FloorDivide: lambda a, b: a // b, cst.Modulo: lambda a, b: a % b,
    cst.Power: lambda a, b: a ** b, cst.LeftShift: lambda a, b: a << b, cst.RightShift: lambda a, b: a >> b,
    cst.BitAnd: lambda a, b: a & b, cst.BitOr: lambda a, b: a | b, cst.BitXor: lambda a, b: a ^ b,
}
_COMPARES = {
    cst.LessThan: lambda a, b: a < b, cst.LessThanEqual: lambda a, b: a <= b, cst.GreaterThan: lambda a, b: a > b,
    cst.GreaterThanEqual: lambda a, b: a >= b, cst.Equal: lambda a, b: a == b, cst.NotEqual: lambda a, b: a != b,
}
# Settings Numba reads from its configuration: numba2cuda translates for the GPU, never for the simulator.
CONFIG_CONSTANTS = {"numba.config.ENABLE_CUDASIM": False, "cuda.config.ENABLE_CUDASIM": False,
                    "numba.core.config.ENABLE_CUDASIM": False, "cuda.core.config.ENABLE_CUDASIM": False,
                    "cuda.simulator_mode": False}
# Functions of constants that are safe to evaluate here: pure, of numbers, in the interpreter's own libraries.
_MATH_FUNCTIONS = {"sqrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "atan", "atan2", "floor", "ceil",
                   "pow", "fabs", "hypot", "isqrt", "log1p", "expm1", "trunc", "gcd", "prod", "radians", "degrees"}
_BUILTINS = {"len", "min", "max", "abs", "round", "bool", "sum", "divmod"}
_NP_SCALAR_FUNCTIONS = {"sqrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "floor", "ceil", "abs",
                        "prod", "sum", "min", "max", "power"}
MATH_CONSTANTS = {"math.pi": math.pi, "math.e": math.e, "math.tau": math.tau, "math.inf": math.inf,
                  "math.nan": math.nan, "np.pi": math.pi, "np.e": math.e, "np.inf": math.inf, "np.nan": math.nan}


def const_eval(info: ModuleInfo, node, local_consts: dict | None = None):
    """Evaluate a module-level constant expression without executing anything."""
    scope = dict(info.constants)
    if local_consts:
        scope.update(local_consts)
    if isinstance(node, cst.Integer):
        return node.evaluated_value
    if isinstance(node, cst.Float):
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
        raise ConstEvalError(node.value)
    if isinstance(node, cst.Attribute):
        canon = resolve(info, node)
        if canon in MATH_CONSTANTS:
            return MATH_CONSTANTS[canon]
        if canon in CONFIG_CONSTANTS:
            return CONFIG_CONSTANTS[canon]
        name = dotted(node)
        if name in scope:  # `params.N` of a sibling module read by import
            return scope[name]
        if isinstance(node.value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and name not in info.aliases:
            try:
                base = const_eval(info, node.value, local_consts)
            except ConstEvalError:
                raise ConstEvalError(name or "attribute") from None
            return _attribute(base, node.attr.value)
        raise ConstEvalError(name or "attribute")
    if isinstance(node, (cst.Tuple, cst.List)):
        return tuple(const_eval(info, el.value, local_consts) for el in node.elements)
    if isinstance(node, cst.UnaryOperation):
        v = const_eval(info, node.expression, local_consts)
        if isinstance(node.operator, cst.Not):
            return not _plain(v)
        if isinstance(v, ConstArray):
            return _array_op(node.operator, v)
        v = v.value if isinstance(v, Typed) else v
        if isinstance(node.operator, cst.Minus):
            return -v
        if isinstance(node.operator, cst.Plus):
            return +v
        return ~v
    if isinstance(node, cst.BinaryOperation) and type(node.operator) in _BINOPS:
        a = const_eval(info, node.left, local_consts)
        b = const_eval(info, node.right, local_consts)
        if isinstance(a, ConstArray) or isinstance(b, ConstArray):
            return _array_op(node.operator, a, b)
        a = a.value if isinstance(a, Typed) else a
        b = b.value if isinstance(b, Typed) else b
        if isinstance(a, tuple) or isinstance(b, tuple):
            if isinstance(node.operator, cst.Add) and isinstance(a, tuple) and isinstance(b, tuple):
                return a + b
            raise ConstEvalError("tuple arithmetic")
        if isinstance(node.operator, cst.Power) and isinstance(b, int) and abs(b) > 4096:
            raise ConstEvalError("a power too large to evaluate")
        try:
            return _BINOPS[type(node.operator)](a, b)
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
        seq = const_eval(info, node.value, local_consts)
        idx = const_eval(info, node.slice[0].slice.value, local_consts)
        idx = idx.value if isinstance(idx, Typed) else idx
        if isinstance(seq, tuple) and isinstance(idx, int) and -len(seq) <= idx < len(seq):
            return seq[idx]
        raise ConstEvalError("subscript")
    if isinstance(node, cst.Call):
        return _const_call(info, node, local_consts)
    raise ConstEvalError(type(node).__name__)


def _plain(v):
    if isinstance(v, Typed):
        return v.value
    if isinstance(v, ConstArray):
        raise ConstEvalError("the truth value of an array")
    return v


def _from_numpy_value(v):
    """A NumPy result -> a constant: arrays stay arrays; scalars of Numba's default types become Python numbers."""
    import numpy as np

    if isinstance(v, np.ndarray):
        if v.size > MAX_CONST_ELEMENTS:
            raise ConstEvalError(f"an array of {v.size} elements")
        return ConstArray.from_numpy(v)
    if isinstance(v, np.generic):
        scalar = T.scalar_by_name(str(v.dtype))
        if scalar is None:
            raise ConstEvalError(f"a {v.dtype} value")
        if scalar in (T.INT64, T.FLOAT64) or scalar.kind == "b":
            return v.item()
        return Typed(v.item(), scalar)
    if isinstance(v, (bool, int, float)):
        return v
    raise ConstEvalError(type(v).__name__)


def _to_numpy_value(v):
    import numpy as np

    if isinstance(v, ConstArray):
        return v.to_numpy()
    if isinstance(v, Typed):
        return _np_dtype(v.type).type(v.value)
    if isinstance(v, tuple):
        return np.array([_to_numpy_value(x) for x in v])
    return v


def _array_op(op, a, b=None):
    import numpy as np

    table = {**_BINOPS, cst.Minus: lambda x: -x, cst.Plus: lambda x: +x, cst.BitInvert: lambda x: ~x}
    fn = table.get(type(op))
    if fn is None:
        raise ConstEvalError("array operation")
    try:
        with np.errstate(all="ignore"):
            result = fn(_to_numpy_value(a)) if b is None else fn(_to_numpy_value(a), _to_numpy_value(b))
    except (TypeError, ValueError) as exc:
        raise ConstEvalError(str(exc)) from None
    return _from_numpy_value(result)


def _attribute(base, attr: str):
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
            return _from_numpy_value(base.to_numpy().T.copy())
    raise ConstEvalError(f".{attr}")


# NumPy functions that make an array from constants: name -> how many leading positional arguments are values
_NP_MAKERS = {"arange", "linspace", "zeros", "ones", "full", "array", "asarray", "ascontiguousarray", "eye",
              "identity", "logspace", "geomspace", "tri", "repeat", "tile", "concatenate", "cumsum", "outer",
              "sin", "cos", "exp", "sqrt", "log", "abs", "floor", "ceil", "power", "reshape", "flip", "diag"}
_ARRAY_METHODS = {"astype", "reshape", "copy", "ravel", "flatten", "transpose", "cumsum", "sum", "max", "min",
                  "prod", "item", "tolist"}


def _const_call(info: ModuleInfo, node: cst.Call, local_consts):
    canon = resolve(info, node.func) or (node.func.value if isinstance(node.func, cst.Name) else None)
    args = [a for a in node.args if a.keyword is None]
    if any(a.star for a in node.args):
        raise ConstEvalError("a call with *args")
    kwargs = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    scalar = scalar_type_of_name(canon)
    if scalar is not None and len(args) == 1:
        v = const_eval(info, args[0].value, local_consts)
        if isinstance(v, TimeDelta) and scalar.kind in "iu":  # np.int64(np.timedelta64(3600, "s")): the count
            return Typed(_convert(v.count, scalar), scalar)
        if isinstance(v, ConstArray):
            return ConstArray([_convert(x, scalar) for x in v.values], scalar, v.shape)
        return Typed(_convert(v.value if isinstance(v, Typed) else v, scalar), scalar)
    if canon in ("int", "float") and len(args) == 1:
        v = const_eval(info, args[0].value, local_consts)
        return (int if canon == "int" else float)(v.value if isinstance(v, Typed) else v)
    if canon in ("np.array", "np.asarray") and args and not isinstance(
            const_eval(info, args[0].value, local_consts), ConstArray):
        values = const_eval(info, args[0].value, local_consts)
        dtype_node = kwargs.get("dtype") or (args[1].value if len(args) > 1 else None)
        dtype = _dtype_of(info, dtype_node, local_consts) if dtype_node is not None else None
        flat, shape = _flatten(values)
        if dtype is None:
            dtype = T.FLOAT64 if any(isinstance(v, float) for v in flat) else T.INT64
        if len(flat) > MAX_CONST_ELEMENTS:
            raise ConstEvalError(f"an array of {len(flat)} elements")
        return ConstArray([_convert(v, dtype) for v in flat], dtype, shape)
    if canon in ("cuda.to_device", "np.ascontiguousarray") and len(args) == 1:
        value = const_eval(info, args[0].value, local_consts)  # a copy on the device: the same shape and values
        if isinstance(value, ConstArray):
            return value
        raise ConstEvalError(canon)
    if canon == "len" and len(args) == 1:
        value = const_eval(info, args[0].value, local_consts)
        if isinstance(value, ConstArray) and value.shape:
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
        values = [_plain_or_tuple(const_eval(info, a.value, local_consts)) for a in args]
        if kwargs or len(values) > 3:
            raise ConstEvalError(canon)
        try:
            result = fn(*values)
        except (TypeError, ValueError, OverflowError, ZeroDivisionError) as exc:
            raise ConstEvalError(str(exc)) from None
        return _from_numpy_value(result) if not isinstance(result, tuple) else result
    if (canon or "").startswith("np.") and canon[3:] in _NP_MAKERS | _NP_SCALAR_FUNCTIONS:
        return _numpy_call(info, canon[3:], args, kwargs, local_consts)
    if isinstance(node.func, cst.Attribute) and node.func.attr.value in _ARRAY_METHODS and canon is None:
        base = const_eval(info, node.func.value, local_consts)
        if isinstance(base, ConstArray):
            return _numpy_method(info, base, node.func.attr.value, args, kwargs, local_consts)
    raise ConstEvalError(canon or "call")


def _plain_or_tuple(v):
    if isinstance(v, tuple):
        return tuple(_plain_or_tuple(x) for x in v)
    return _plain(v)


_DTYPE_STRINGS = {"f4": "float32", "f8": "float64", "i4": "int32", "i8": "int64", "u1": "uint8", "float": "float64",
                  "int": "int64"}


def _dtype_of(info, node, local_consts):
    """A dtype argument: np.float32, numba.float32, "float32", "f4", float, int, bool."""
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        dtype = T.scalar_by_name(_DTYPE_STRINGS.get(text, text))
    elif isinstance(node, cst.Name) and node.value in ("float", "int", "bool") and node.value not in info.aliases:
        dtype = {"float": T.FLOAT64, "int": T.INT64, "bool": T.BOOL}[node.value]
    else:
        dtype = scalar_type_of_name(resolve(info, node))
    if dtype is None:
        raise ConstEvalError("dtype")
    return dtype


def _numpy_args(info, args, kwargs, local_consts):
    import numpy as np

    values = [_to_numpy_value(const_eval(info, a.value, local_consts)) for a in args]
    named = {}
    for key, value in kwargs.items():
        if key == "dtype":
            named[key] = _np_dtype(_dtype_of(info, value, local_consts))
        elif key in ("endpoint", "axis", "num", "k", "base", "order"):
            named[key] = _to_numpy_value(const_eval(info, value, local_consts))
        else:
            raise ConstEvalError(f"keyword {key}=")
    for v in values:
        if isinstance(v, np.ndarray) and v.size > MAX_CONST_ELEMENTS:
            raise ConstEvalError("a large array")
    return values, named


def _numpy_call(info, name, args, kwargs, local_consts):
    import numpy as np

    values, named = _numpy_args(info, args, kwargs, local_consts)
    sizes = [v for v in values if isinstance(v, (int, float))]
    if name in ("zeros", "ones", "full", "arange", "linspace", "eye", "identity", "logspace", "geomspace", "tri"):
        count = values[0] if values else 0
        if isinstance(count, tuple):
            count = math.prod(count)
        if name in ("arange",):
            count = max(abs(float(v)) for v in sizes) if sizes else 0
        elif name in ("linspace", "logspace", "geomspace"):
            count = values[2] if len(values) > 2 else named.get("num", 50)
        elif name in ("eye", "identity", "tri"):
            count = values[0] * (values[1] if len(values) > 1 else values[0]) if values else 0
        if not isinstance(count, (int, float)) or count > MAX_CONST_ELEMENTS:
            raise ConstEvalError("a large array")
    try:
        with np.errstate(all="ignore"):
            result = getattr(np, name)(*values, **named)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ConstEvalError(str(exc)) from None
    return _from_numpy_value(result)


def _numpy_method(info, base: ConstArray, name, args, kwargs, local_consts):
    import numpy as np

    if name == "astype":
        if len(args) != 1 or kwargs:
            raise ConstEvalError("astype")
        return ConstArray.from_numpy(base.to_numpy().astype(_np_dtype(_dtype_of(info, args[0].value, local_consts))))
    values, named = _numpy_args(info, args, kwargs, local_consts)
    if name == "tolist":
        raise ConstEvalError("tolist")
    try:
        result = getattr(base.to_numpy(), name)(*values, **named)
    except (TypeError, ValueError) as exc:
        raise ConstEvalError(str(exc)) from None
    return _from_numpy_value(np.asarray(result) if name != "item" else result)


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
