"""Constant values and their NumPy side: typed scalars, arrays, the limits of what is baked into a kernel, and
NumPy calls on constants evaluated by NumPy itself (so a value is exactly what the module computes).

The expression walk that calls these is constants.const_eval, handed in as EVALUATE (it imports this module)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import libcst as cst

from ..ir import typesys as T
from .names import resolve, scalar_type_of_name

BINOPS = {
    cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b, cst.Multiply: lambda a, b: a * b,
    cst.Divide: lambda a, b: a / b, cst.FloorDivide: lambda a, b: a // b, cst.Modulo: lambda a, b: a % b,
    cst.Power: lambda a, b: a ** b, cst.LeftShift: lambda a, b: a << b, cst.RightShift: lambda a, b: a >> b,
    cst.BitAnd: lambda a, b: a & b, cst.BitOr: lambda a, b: a | b, cst.BitXor: lambda a, b: a ^ b,
}


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

        return np.array(self.values, dtype=np_dtype(self.dtype)).reshape(self.shape)

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


def np_dtype(scalar: T.Scalar):
    import numpy as np

    return np.dtype("bool" if scalar.kind == "b" else scalar.name)


@dataclass(frozen=True)
class DeviceArray:
    """cuda.to_device(a constant array): its shape is known (len(), .shape, .size), its contents are not a constant,
    since Numba captures a device array by pointer and a kernel sees what it holds when it runs."""
    shape: tuple
    dtype: T.Scalar


@dataclass(frozen=True)
class TimeDelta:
    """np.timedelta64(count, unit): usable only through an integer cast (np.int64(...)), as kernels use it."""
    count: int
    unit: str


class ConstEvalError(Exception):
    pass



NP_SCALAR_FUNCTIONS = {"sqrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "floor", "ceil", "abs",
                        "prod", "sum", "min", "max", "power"}

# NumPy functions that make an array from constants: name -> how many leading positional arguments are values
NP_MAKERS = {"arange", "linspace", "zeros", "ones", "full", "array", "asarray", "ascontiguousarray", "eye",
              "identity", "logspace", "geomspace", "tri", "concatenate", "cumsum",
              "sin", "cos", "exp", "sqrt", "log", "abs", "floor", "ceil", "power", "reshape", "flip", "diag"}
ARRAY_METHODS = {"astype", "reshape", "copy", "ravel", "flatten", "transpose", "cumsum", "sum", "max", "min",
                  "prod", "item", "tolist"}


def from_numpy_value(v):
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


#: what NumPy raises for arguments it cannot take (a tuple of arrays of different lengths, an axis out of range):
#: the value is then not a constant numba2cuda can evaluate, never a crash of the translator
NUMPY_REFUSALS = (ArithmeticError, LookupError, TypeError, ValueError, MemoryError)


def to_numpy_value(v):
    import numpy as np

    if isinstance(v, ConstArray):
        return v.to_numpy()
    if isinstance(v, Typed):
        return np_dtype(v.type).type(v.value)
    if isinstance(v, tuple):
        try:
            return np.array([to_numpy_value(x) for x in v])
        except NUMPY_REFUSALS as exc:  # ((5, 10), (1, 2, 3)): no array NumPy makes
            raise ConstEvalError(str(exc)) from None
    return v


def array_op(op, a, b=None):
    import numpy as np

    table = {**BINOPS, cst.Minus: lambda x: -x, cst.Plus: lambda x: +x, cst.BitInvert: lambda x: ~x}
    fn = table.get(type(op))
    if fn is None:
        raise ConstEvalError("array operation")
    try:
        x, y = to_numpy_value(a), to_numpy_value(b)
        if b is not None and math.prod(np.broadcast_shapes(np.shape(x), np.shape(y))) > MAX_CONST_ELEMENTS:
            raise ConstEvalError("a large array")
        with np.errstate(all="ignore"):
            result = fn(x) if b is None else fn(x, y)
    except NUMPY_REFUSALS as exc:
        raise ConstEvalError(str(exc)) from None
    return from_numpy_value(result)


DTYPE_STRINGS = {"f4": "float32", "f8": "float64", "i4": "int32", "i8": "int64", "u1": "uint8", "float": "float64",
                  "int": "int64"}


def dtype_of(info, node):
    """A dtype argument: np.float32, numba.float32, "float32", "f4", float, int, bool."""
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        dtype = T.scalar_by_name(DTYPE_STRINGS.get(text, text))
    elif isinstance(node, cst.Name) and node.value in ("float", "int", "bool") and node.value not in info.aliases:
        dtype = {"float": T.FLOAT64, "int": T.INT64, "bool": T.BOOL}[node.value]
    else:
        dtype = scalar_type_of_name(resolve(info, node))
    if dtype is None:
        raise ConstEvalError("dtype")
    return dtype


def numpy_args(evaluate, info, args, kwargs, local_consts):
    import numpy as np

    values = [to_numpy_value(evaluate(info, a.value, local_consts)) for a in args]
    named = {}
    for key, value in kwargs.items():
        if key == "dtype":
            named[key] = np_dtype(dtype_of(info, value))
        elif key in ("endpoint", "axis", "num", "k", "base", "order"):
            named[key] = to_numpy_value(evaluate(info, value, local_consts))
        else:
            raise ConstEvalError(f"keyword {key}=")
    for v in values:
        if isinstance(v, np.ndarray) and v.size > MAX_CONST_ELEMENTS:
            raise ConstEvalError("a large array")
    return values, named


def numpy_call(evaluate, info, name, args, kwargs, local_consts):
    import numpy as np

    values, named = numpy_args(evaluate, info, args, kwargs, local_consts)
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
    except NUMPY_REFUSALS as exc:
        raise ConstEvalError(str(exc)) from None
    return from_numpy_value(result)


def numpy_method(evaluate, info, base: ConstArray, name, args, kwargs, local_consts):
    import numpy as np

    if name == "astype":
        if len(args) != 1 or kwargs:
            raise ConstEvalError("astype")
        return ConstArray.from_numpy(base.to_numpy().astype(np_dtype(dtype_of(info, args[0].value))))
    values, named = numpy_args(evaluate, info, args, kwargs, local_consts)
    if name == "tolist":
        raise ConstEvalError("tolist")
    try:
        result = getattr(base.to_numpy(), name)(*values, **named)
    except NUMPY_REFUSALS as exc:
        raise ConstEvalError(str(exc)) from None
    return from_numpy_value(np.asarray(result) if name != "item" else result)
