"""The namedtuples a module makes -> the field names of a tuple parameter typed without them.

numba-cuda's own tests launch `f[1, 1](r1, r2, Point(1, 2, 2.236))` with `Point = namedtuple("Point", ("x", "y",
"r"))` made beside the kernel. Typed from outside as a plain `Tuple((int64, int64, float64))`, the kernel's `x.r`
has no field to read; the source says which namedtuple it is when exactly one made in the kernel's enclosing
functions or its module has that many fields, among them every one the kernel reads."""

from __future__ import annotations

import libcst as cst

from .names import resolve
from .scan import find_nodes


def _fields(info, call: cst.Call) -> tuple | None:
    """The field names of `namedtuple("P", ("x", "y"))`, `namedtuple("P", "x y")` or `namedtuple("P", ["x", "y"])`."""
    if resolve(info, call.func) != "collections.namedtuple" or len(call.args) < 2:
        return None
    spec = call.args[1].value
    if isinstance(spec, cst.SimpleString):
        return tuple(spec.evaluated_value.replace(",", " ").split())
    if isinstance(spec, (cst.Tuple, cst.List)) and all(isinstance(e.value, cst.SimpleString)
                                                        for e in spec.elements):
        return tuple(e.value.evaluated_value for e in spec.elements)
    return None


def _class_fields(cls: cst.ClassDef) -> tuple | None:
    """`class P(NamedTuple): x: int; y: float`."""
    if not any(isinstance(b.value, (cst.Name, cst.Attribute)) and
               (b.value.value if isinstance(b.value, cst.Name) else b.value.attr.value) == "NamedTuple"
               for b in cls.bases) or not isinstance(cls.body, cst.IndentedBlock):
        return None
    return tuple(small.target.value for line in cls.body.body if isinstance(line, cst.SimpleStatementLine)
                 for small in line.body if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name))


def fields_of(info, scopes, arity: int, read: set) -> tuple | None:
    """The one namedtuple made in SCOPES (the kernel's enclosing functions, then its module) with ARITY fields,
    READ among them; None where there is no such one, or more than one."""
    found = set()
    for scope in scopes:
        for node in find_nodes(scope, lambda n: isinstance(n, (cst.Call, cst.ClassDef))):
            names = _fields(info, node) if isinstance(node, cst.Call) else _class_fields(node)
            if names and len(names) == arity and read <= set(names):
                found.add(names)
    return found.pop() if len(found) == 1 else None


def named_fields(info, name: str) -> tuple | None:
    """The fields of the namedtuple class NAME names in this scope (`Pair = namedtuple("Pair", "a b")`, or a
    `class Pair(NamedTuple)` of the module), else None."""
    made = info.value_nodes.get(name)
    if isinstance(made, cst.Call):
        return _fields(info, made)
    cls = next((s for s in info.module_info.module.body if isinstance(s, cst.ClassDef) and s.name.value == name), None)
    return _class_fields(cls) if cls is not None else None
