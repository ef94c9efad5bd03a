"""A module's structured dtypes (`particle = np.dtype([("x", np.float32), ...])`, `numba.from_dtype(particle)`)
-> Records under the module's own names, read from the source without running it.

The names let a signature, `--types` and the C struct say `particle` where Numba would print the whole layout."""

from __future__ import annotations

import dataclasses

import libcst as cst

from ..ir import typesys as T
from ..ir.records import from_numpy, numpy_dtype
from ..ir.typesys import Record, parse_record
from .names import canonical, resolve, scalar_type_of_name


def _canonical(*names):
    return tuple(canonical(n) for n in names)


_FROM_DTYPE = _canonical("numba.from_dtype", "numba.np.numpy_support.from_dtype",
                         "numba.cuda.np.numpy_support.from_dtype", "numba.numpy_support.from_dtype")
_NP_DTYPE = _canonical("numpy.dtype")


class _NotLiteral(Exception):
    pass


def module_records(info) -> dict[str, Record]:
    """Python name -> Record, for each module-level name bound once to a structured dtype or to Numba's type of one."""
    root = info.module_info
    if root.records is not None:
        return root.records
    out: dict[str, Record] = {}
    for name, node in list(root.value_nodes.items()):
        dtype = _dtype_of(root, node, out)
        if dtype is not None:
            try:
                out[name] = from_numpy(dtype, _c_name(name))
            except T.TypeStringError:
                continue  # a field numba2cuda cannot lay out: the kernel that uses it says so
    for name, text in root.run_records.items():  # import mode: the values the run made
        if name not in out:
            try:
                out[name] = dataclasses.replace(parse_record(text), cname=_c_name(name))
            except T.TypeStringError:
                continue
    for name, record in root.imported_records.items():  # a sibling module's, under the name this one gives it
        out.setdefault(name, dataclasses.replace(record, cname=_c_name(name)))
    root.records = out
    return out


def named_record(t, info):
    """T with its record (or its arrays' record) named as the module names that layout."""
    element = t.dtype if isinstance(t, T.Array) else t
    if not isinstance(element, Record):
        return t
    by_layout = {r.name: r for r in reversed(list(module_records(info).values()))}  # the first name wins
    named = by_layout.get(element.name)
    if named is None:
        return t
    return dataclasses.replace(t, dtype=named) if isinstance(t, T.Array) else named


def record_spellings(info) -> dict[str, str]:
    """Python name -> Numba's spelling of its record: what a signature or --types may write in its place."""
    return {name: r.name for name, r in module_records(info).items()}


def _c_name(name: str) -> str:
    return name if name.isidentifier() else ""


def _dtype_of(info, node, known: dict):
    if not isinstance(node, cst.Call):
        return None
    canon = resolve(info, node.func)
    if canon in _FROM_DTYPE and len(node.args) == 1 and isinstance(node.args[0].value, cst.Name):
        record = known.get(node.args[0].value.value)
        return None if record is None else numpy_dtype(record)
    if canon not in _NP_DTYPE:
        return None
    try:
        args = [_literal(info, a.value, known) for a in node.args if a.keyword is None]
        kwargs = {a.keyword.value: _literal(info, a.value, known) for a in node.args if a.keyword is not None}
        import numpy as np  # only for a module that writes np.dtype(...): translate's start stays light

        dtype = np.dtype(*args, **kwargs)
    except Exception:  # noqa: BLE001 - anything NumPy refuses, or a value only running gives: not a record here
        return None
    return dtype if dtype.names is not None else None


def _literal(info, node, known: dict):
    """The value of a literal dtype description: strings, numbers, lists, tuples, dicts, NumPy and Numba scalar
    types, and the module's other records."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        return node.evaluated_value
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, (cst.List, cst.Tuple)):
        items = [_literal(info, e.value, known) for e in node.elements]
        return items if isinstance(node, cst.List) else tuple(items)
    if isinstance(node, cst.Dict):
        return {_literal(info, e.key, known): _literal(info, e.value, known) for e in node.elements}
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    if isinstance(node, cst.Name) and node.value in known:
        return numpy_dtype(known[node.value])
    if isinstance(node, (cst.Name, cst.Attribute)):
        scalar = scalar_type_of_name(resolve(info, node))
        if scalar is not None:
            import numpy as np

            return np.dtype(scalar.name)
    raise _NotLiteral(info.code(node))


__all__ = ["module_records", "named_record", "record_spellings"]
