"""Fields of records (elements of a NumPy structured dtype) -> loads and stores of a struct's members.

Numba reads `a[i].x` and `a[i]["x"]` alike, and `r = a[i]` is a reference into the array (writing `r.x` writes
the array), so a named record is a view of one element; a record argument is one too."""

from __future__ import annotations

import itertools

import libcst as cst

from ..errors import Unsupported
from ..ir import intrinsics
from ..ir import nodes as ir
from ..ir.records import numba_alignment, opaque
from ..ir import typesys as T
from ..ir.typesys import Nested, Record


def is_array_field(value) -> bool:
    """`r.h` of a record whose field h is an array, not yet indexed."""
    return isinstance(value, ir.Load) and value.field is not None and value.sub is None and \
        isinstance(value.array.dtype.field_type(value.field), Nested)


def is_record(value) -> bool:
    """A whole record: an element of a record array, or a named record (a view of one element)."""
    if isinstance(value, ir.Load):
        return isinstance(value.array.dtype, Record) and value.field is None
    return isinstance(value, ir.ArrayVar) and isinstance(value.dtype, Record) and value.ndim == 0


class RecordLowerer:
    """Needs, from the class it is mixed into: info, row_view(), index_list()."""

    def record_member(self, base, name: str, node):
        """`a[i].x`, `r.x`, `a[i]["x"]`: one field of one record, readable and assignable."""
        load = base if isinstance(base, ir.Load) else ir.Load(base, [])
        record = load.array.dtype
        t = record.field_type(name)
        shown = self.info.code(node)
        if t is None:
            raise Unsupported(node, f"record field '{name}'", f"the record has the fields {', '.join(record.names)}",
                              f"read one of them by name, e.g. {self.info.code(_record_node(node))}."
                              f"{record.names[0]}")
        offset = next(o for n, _, o in record.fields if n == name)
        if offset % numba_alignment(t):  # numba-cuda: "Record(...).value of type float64 is not aligned"
            raise Unsupported(node, f"the field '{shown}'", f"a {t} at offset {offset}, which is not a multiple of "
                              f"its alignment ({numba_alignment(t)}); numba-cuda refuses to read or write it too "
                              "(the GPU needs aligned loads)", "lay the dtype out as C does: np.dtype([...], "
                              "align=True), or put the wider fields first")
        if opaque(record, name):
            raise Unsupported(node, f"the field '{shown}'", f"a {t} at a misaligned offset in the record, which "
                              "numba2cuda's complex type cannot be packed at", "lay the dtype out with the complex "
                              f"field at a multiple of {t.bits // 8} bytes")
        out = ir.Load(load.array, list(load.indices), list(load.wrap))
        out.field = name
        return out

    def array_field_element(self, load: ir.Load, node):
        """`r.h[k]`, `a[i].j[0, 1]`: an element of a record's array field (Numba's nestedarray), indexed in
        C as the struct's own array member, h[k0][k1]; a negative constant counts from its end."""
        shape = load.array.dtype.field_type(load.field).shape
        if any(isinstance(el.slice, cst.Slice) for el in node.slice):
            raise Unsupported(node, f"a slice of the array field '{self.info.code(node.value)}'", "numba2cuda "
                              "indexes a record's array field element by element", "loop over its elements")
        indices = self.index_list(node)
        if len(indices) != len(shape):
            raise Unsupported(node, f"the array field '{self.info.code(node.value)}'", f"has {len(shape)} "
                              f"dimension(s) {shape}, indexed with {len(indices)}", "index every dimension")
        for k, (i, n) in enumerate(zip(indices, shape)):
            if isinstance(i, ir.Const) and isinstance(i.value, int) and i.value < 0:
                indices[k] = ir.Const(i.value + n, i.type)
                indices[k].node = i.node
            elif not (isinstance(i, ir.Const) and isinstance(i.value, int)):
                # Numba wraps a negative index of a nested array too (a password policy's `pw[lo - 1]`)
                indices[k] = ir.Call(intrinsics.WRAP_INDEX, [i, ir.Const(n, T.INT64)])
        out = ir.Load(load.array, list(load.indices), list(load.wrap), load.field, indices)
        return out

    def store_array_field(self, target: ir.Load, value_node) -> list:
        """`dst["v"] = src[i]["v"]` (numba-cuda's record tests): an array field stored whole from another of the
        same shape, element by element, as Numba's setitem copies it."""
        value = self.value(value_node)
        want = target.array.dtype.field_type(target.field)
        got = value.array.dtype.field_type(value.field) if is_array_field(value) else None
        if got is None or got.shape != want.shape:
            raise Unsupported(value_node, f"assignment to the array field '{target.field}'", f"it takes a record's "
                              f"array field of its shape {want.shape}", "assign its elements one by one: r.h[k] = ...")
        out = []
        for index in itertools.product(*(range(n) for n in want.shape)):
            def at(load):
                return ir.Load(load.array, list(load.indices), list(load.wrap), load.field,
                               [ir.Const(k, T.INT64) for k in index])
            out.append(ir.Store(target=at(target), value=at(value)))
        return out

    def record_reference(self, load: ir.Load, node) -> ir.ArrayVar:
        """`r = a[i]`: a view of that one element, as Numba's record is a pointer into the array."""
        return self.row_view(load.array, list(load.indices), node)

    def whole_array_field(self, arr: ir.ArrayVar, attr: str, node):
        if isinstance(arr.dtype, Record) and attr in arr.dtype.names:
            raise Unsupported(node, f"'{self.info.code(node)}', a field of every record", "numba2cuda reads a "
                              "record's fields one element at a time", f"index first: {self.info.code(node.value)}"
                              f"[i].{attr}")


def _record_node(node):
    return node.value if isinstance(node, (cst.Attribute, cst.Subscript)) else node


__all__ = ["RecordLowerer", "is_array_field", "is_record"]
