"""Fields of records (elements of a NumPy structured dtype) -> loads and stores of a struct's members.

Numba reads `a[i].x` and `a[i]["x"]` alike, and `r = a[i]` is a reference into the array (writing `r.x` writes
the array), so a named record is a view of one element; a record argument is one too."""

from __future__ import annotations

import libcst as cst

from ..errors import Unsupported
from ..ir import nodes as ir
from ..ir.records import Nested, Record, numba_alignment, opaque


def is_record(value) -> bool:
    """A whole record: an element of a record array, or a named record (a view of one element)."""
    if isinstance(value, ir.Load):
        return isinstance(value.array.dtype, Record) and value.field is None
    return isinstance(value, ir.ArrayVar) and isinstance(value.dtype, Record) and value.ndim == 0


class RecordLowerer:
    """Needs, from the class it is mixed into: info, row_view()."""

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
        if isinstance(t, Nested):
            raise Unsupported(node, f"the array field '{shown}'", f"numba2cuda reads a record's number fields, not "
                              f"its array fields ({t})", "store that field as an array of its own, indexed like "
                              "the records")
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


__all__ = ["RecordLowerer", "is_record"]
