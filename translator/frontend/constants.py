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


class ConstEvalError(Exception):
    pass


_BINOPS = {
    cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b, cst.Multiply: lambda a, b: a * b,
    cst.Divide: lambda a, b: a / b, cst.FloorDivide: lambda a, b: a // b, cst.Modulo: lambda a, b: a % b,
    cst.Power: lambda a, b: a ** b, cst.LeftShift: lambda a, b: a << b, cst.RightShift: lambda a, b: a >> b,
    cst.BitAnd: lambda a, b: a & b, cst.BitOr: lambda a, b: a | b, cst.BitXor: lambda a, b: a ^ b,
}
MATH_CONSTANTS = {"math.pi": math.pi, "math.e": math.e, "math.tau": math.tau, "math.inf": math.inf,
                  "math.nan": math.nan, "np.pi": math.pi, "np.e": math.e, "np.inf": math.inf, "np.nan": math.nan,
                  "cmath.pi": math.pi, "cmath.e": math.e, "cmath.tau": math.tau, "cmath.inf": math.inf,
                  "cmath.nan": math.nan, "cmath.infj": complex(0, math.inf), "cmath.nanj": complex(0, math.nan)}


def const_eval(info: ModuleInfo, node, local_consts: dict | None = None):
    """Evaluate a module-level constant expression without executing anything."""
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
        if node.value in scope:
            return scope[node.value]
        if resolve(info, node) in MATH_CONSTANTS:  # from math import pi
            return MATH_CONSTANTS[resolve(info, node)]
        raise ConstEvalError(node.value)
    if isinstance(node, cst.Attribute):
        canon = resolve(info, node)
        if canon in MATH_CONSTANTS:
            return MATH_CONSTANTS[canon]
        raise ConstEvalError(dotted(node) or "attribute")
    if isinstance(node, (cst.Tuple, cst.List)):
        return tuple(const_eval(info, el.value, local_consts) for el in node.elements)
    if isinstance(node, cst.UnaryOperation):
        v = const_eval(info, node.expression, local_consts)
        v = v.value if isinstance(v, Typed) else v
        if isinstance(node.operator, cst.Minus):
            return -v
        if isinstance(node.operator, cst.Plus):
            return +v
        if isinstance(node.operator, cst.BitInvert):
            return ~v
        return not v
    if isinstance(node, cst.BinaryOperation) and type(node.operator) in _BINOPS:
        a = const_eval(info, node.left, local_consts)
        b = const_eval(info, node.right, local_consts)
        a = a.value if isinstance(a, Typed) else a
        b = b.value if isinstance(b, Typed) else b
        if isinstance(a, tuple) or isinstance(b, tuple):
            if isinstance(node.operator, cst.Add) and isinstance(a, tuple) and isinstance(b, tuple):
                return a + b
            raise ConstEvalError("tuple arithmetic")
        try:
            return _BINOPS[type(node.operator)](a, b)
        except (ZeroDivisionError, OverflowError, ValueError) as exc:
            raise ConstEvalError(str(exc)) from None
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        seq = const_eval(info, node.value, local_consts)
        idx = const_eval(info, node.slice[0].slice.value, local_consts)
        if isinstance(seq, tuple) and isinstance(idx, int):
            return seq[idx]
        raise ConstEvalError("subscript")
    if isinstance(node, cst.Call):
        return _const_call(info, node, local_consts)
    raise ConstEvalError(type(node).__name__)


def _const_call(info: ModuleInfo, node: cst.Call, local_consts):
    canon = resolve(info, node.func) or (node.func.value if isinstance(node.func, cst.Name) else None)
    args = [a for a in node.args if a.keyword is None]
    kwargs = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    scalar = scalar_type_of_name(canon)
    if scalar is not None and len(args) == 1:
        v = const_eval(info, args[0].value, local_consts)
        return Typed(_convert(v.value if isinstance(v, Typed) else v, scalar), scalar)
    if canon == "float" and len(args) == 1 and isinstance(args[0].value, cst.SimpleString):
        text = args[0].value.evaluated_value
        if isinstance(text, str) and text.strip().lower().lstrip("+-") in ("inf", "infinity", "nan"):
            return float(text)
        raise ConstEvalError("float of a string")
    if canon in ("int", "float") and len(args) == 1:
        v = const_eval(info, args[0].value, local_consts)
        return (int if canon == "int" else float)(v.value if isinstance(v, Typed) else v)
    if canon in ("np.array", "np.asarray") and args:
        values = const_eval(info, args[0].value, local_consts)
        dtype_node = kwargs.get("dtype") or (args[1].value if len(args) > 1 else None)
        dtype = scalar_type_of_name(resolve(info, dtype_node)) if dtype_node is not None else None
        flat, shape = _flatten(values)
        if dtype is None:
            dtype = T.FLOAT64 if any(isinstance(v, float) for v in flat) else T.INT64
        return ConstArray([_convert(v, dtype) for v in flat], dtype, shape)
    raise ConstEvalError(canon or "call")


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
    arr = np.array(value).astype(np.dtype(scalar.name if scalar.name != "bool" else "bool"))
    return arr.item()
