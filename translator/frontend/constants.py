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
        if node.value in scope:
            return scope[node.value]
        raise ConstEvalError(node.value)
    if isinstance(node, cst.Attribute):
        canon = resolve(info, node)
        if canon in MATH_CONSTANTS:
            return MATH_CONSTANTS[canon]
        raise ConstEvalError(dotted(node) or "attribute")
    if isinstance(node, cst.List):  # Numba rejects a global list in a kernel; np.array([...]) reads one itself
        raise ConstEvalError("list")
    if isinstance(node, cst.Tuple):
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
                if len(a) + len(b) > MAX_ELEMENTS:
                    raise ConstEvalError("tuple too long")
                return a + b
            raise ConstEvalError("tuple arithmetic")
        _check_size(node.operator, a, b)
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


def _const_call(info: ModuleInfo, node: cst.Call, local_consts):
    canon = resolve(info, node.func) or (node.func.value if isinstance(node.func, cst.Name) else None)
    args = [a for a in node.args if a.keyword is None]
    kwargs = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    scalar = scalar_type_of_name(canon)
    if scalar is not None and len(args) == 1:
        v = const_eval(info, args[0].value, local_consts)
        return Typed(_convert(v.value if isinstance(v, Typed) else v, scalar), scalar)
    if canon in ("int", "float") and len(args) == 1:
        v = const_eval(info, args[0].value, local_consts)
        return (int if canon == "int" else float)(v.value if isinstance(v, Typed) else v)
    if canon in ("np.array", "np.asarray") and args:
        values = _sequence(info, args[0].value, local_consts)
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
