"""libcst function -> the shape of the tuple it returns (a ray tracer's color, point and direction): what its
callers unpack and C's result struct holds, one number after another; and tuples of numbers flattened to that
order and nested again by a shape."""

from __future__ import annotations

import libcst as cst

from ..ir import nodes as ir
from ..ir import typesys as T
from .expr import TupleValue
from .names import dotted
from .scan import find_nodes

_UNKNOWN, _CONFLICT = "unknown", "conflict"  # tuple_shape's items that neither say a number nor a tuple


def tuple_shape(fn: cst.FunctionDef, functions=None, depth: int = 0) -> "tuple | None":
    """The shape of the tuple every return of FN gives, where they agree: an item is None for a number and the
    shape of a tuple for a tuple ((None, None) for `return x, y`; ((None,) * 3,) * 2 for a ray tracer's
    `return rgb, p`). A tuple is one written there, a local every binding of which is such a tuple
    (`t = (x, y); return t`, `rgb, p = trace(...)`), or what a device function of FUNCTIONS (name -> its
    FunctionInfo) returns (`return normalize(d)`). What the source does not tell (a parameter returned, `t[0]`)
    takes the shape another return gives there, else is a number; the lowering checks each return against it.
    None where some return is not known to be a tuple."""
    if depth > 8:  # device functions cannot recurse; a cycle here is a program Numba rejects
        return None
    called = {}

    def call_shape(value):
        name = dotted(value.func)  # f(...), or plane.reflect(...) of `import ...geometry.plane as plane`
        if name is not None and functions and name in functions:
            if name not in called:
                called[name] = result_shape(functions[name], functions, depth + 1)
            return called[name]
        return None

    def shape(value, seen=()):
        if isinstance(value, cst.Tuple):
            if any(isinstance(el, cst.StarredElement) for el in value.elements):
                return _CONFLICT
            return tuple(shape(el.value, seen) for el in value.elements)
        if isinstance(value, cst.Call):
            return call_shape(value)
        if isinstance(value, cst.Name):
            found = bindings(value.value)
            if value.value in seen or not found:
                return _UNKNOWN  # a parameter, a global, or a name bound through itself
            return _merge_all(bound_shape(b, value.value, seen + (value.value,)) for b in found)
        if isinstance(value, (cst.Subscript, cst.Attribute, cst.IfExp)):
            return _UNKNOWN
        return None  # a number written, or arithmetic

    def bindings(name):
        return [small for small in find_nodes(fn, lambda n: isinstance(n, (cst.Assign, cst.AugAssign, cst.For)))
                if name in _target_names(small)]

    def bound_shape(binding, name, seen):
        if isinstance(binding, cst.AugAssign):
            return None
        if not isinstance(binding, cst.Assign) or len(binding.targets) != 1:
            return _UNKNOWN
        target = binding.targets[0].target
        if isinstance(target, cst.Name):
            return shape(binding.value, seen)
        whole = shape(binding.value, seen)  # `rgb, p = trace(...)`: p is the call's second item
        names = [el.value.value if isinstance(el.value, cst.Name) else None for el in target.elements]
        if not isinstance(whole, tuple) or len(whole) != len(names):
            return _UNKNOWN
        return whole[names.index(name)]

    found = _merge_all(shape(r.value) if r.value is not None else None
                       for r in find_nodes(fn, lambda n: isinstance(n, cst.Return)))
    return _settled(found) if isinstance(found, tuple) and not _conflicts(found) else None


def _merge_all(shapes):
    out = _UNKNOWN
    for sh in shapes:
        out = _merge(out, sh)
    return out


def _merge(a, b):
    if a == _UNKNOWN:
        return b
    if b == _UNKNOWN:
        return a
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return tuple(_merge(x, y) for x, y in zip(a, b))
    return a if a == b else _CONFLICT


def _conflicts(shape) -> bool:
    return shape == _CONFLICT or isinstance(shape, tuple) and any(_conflicts(item) for item in shape)


def _settled(shape):
    """What the source did not tell is a number."""
    return tuple(_settled(item) for item in shape) if isinstance(shape, tuple) else None


def result_shape(fi, functions, depth: int = 0) -> "tuple | None":
    """tuple_shape of the device function FI (a FunctionInfo), read with the names its own module gives it."""
    return tuple_shape(fi.node, fi.scope.functions if fi.scope is not None else functions, depth)


def _target_names(small) -> list:
    target = small.target if isinstance(small, (cst.AugAssign, cst.For)) else None
    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [target]
    out = []
    for t in targets:
        if isinstance(t, cst.Name):
            out.append(t.value)
        elif isinstance(t, (cst.Tuple, cst.List)):
            out += [el.value.value for el in t.elements if isinstance(el.value, cst.Name)]
    return out


def shape_of(value) -> tuple | None:
    """VALUE's shape as tuple_shape spells it: None for a number, a tuple of item shapes for a tuple."""
    return tuple(shape_of(v) for v in value.items) if isinstance(value, TupleValue) else None


def type_shape(ty: T.Tuple) -> tuple:
    """A tuple type's shape as shape_of spells a value's."""
    return tuple(type_shape(t) if isinstance(t, T.Tuple) else None for t in ty.items)


def count_numbers(shape) -> int:
    return sum(1 if item is None else count_numbers(item) for item in shape)


def nest(numbers: list, shape) -> TupleValue:
    """The tuple of SHAPE whose numbers, in order, are NUMBERS."""
    numbers = iter(numbers)

    def build(sh):
        return TupleValue([next(numbers) if item is None else build(item) for item in sh])

    return build(shape)


def flatten(value) -> list | None:
    """A tuple's numbers in order, through the tuples it holds; None if it holds anything else (an array)."""
    out = []
    for item in value.items:
        if isinstance(item, TupleValue):
            inner = flatten(item)
            if inner is None:
                return None
            out += inner
        elif isinstance(item, ir.Expr):
            out.append(item)
        else:
            return None
    return out
