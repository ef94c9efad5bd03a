"""Tuples a kernel indexes -> their items (mixed into the expression lowerer): `t[1]` is the item itself, `t[k]`
with k known only at run time a chain of conditionals, as Numba's switch over a tuple of one type."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from ..errors import Unsupported
from ..ir import nodes as ir
from .expr import TupleValue, const_expr


class TupleLowerer:
    """Needs, from the class it is mixed into: expr(), counters (the loop counters the translator made)."""

    def tuple_subscript(self, base: TupleValue, node: cst.Subscript):
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
            return self.tuple_slice(base, node, node.slice[0].slice)
        if len(node.slice) != 1:
            raise Unsupported(node, "tuple index", "a tuple takes one index")
        idx = self.expr(node.slice[0].slice.value)
        # a constant through an integer cast counts (`cuda.grid(2)[types.uint32(0)]`, as sgkit writes it)
        while isinstance(idx, ir.Cast) and idx.to.is_int and isinstance(idx.value, ir.Const) and \
                isinstance(idx.value.value, int) and 0 <= idx.value.value < 2 ** (idx.to.bits - 1):
            idx = idx.value
        if isinstance(idx, ir.Const) and isinstance(idx.value, int):
            if not -len(base.items) <= idx.value < len(base.items):
                raise Unsupported(node, "tuple index", f"{idx.value} is out of range for a tuple of "
                                  f"{len(base.items)}", "index with 0 .. len(t) - 1")
            return base.items[idx.value]
        return self.select_item(base, idx, node)

    def tuple_slice(self, base: TupleValue, node, sl: cst.Slice) -> TupleValue:
        """`a.shape[2:4]`, `t[1:]`, `t[::-1]`: a slice with constant bounds is the tuple of those items, as Numba
        types it (its length is part of the type, so the bounds must be constants)."""
        bounds = []
        for part in (sl.lower, sl.upper, sl.step):
            v = self.expr(part) if part is not None else None
            if v is not None and not (isinstance(v, ir.Const) and isinstance(v.value, int)):
                raise Unsupported(part, "tuple slice", "its bounds must be integer constants (a tuple's length is "
                                  "part of its type)", "slice with constants: t[1:3]")
            bounds.append(v.value if v is not None else None)
        if bounds[2] == 0:
            raise Unsupported(sl.step, "tuple slice", "slice step cannot be zero")
        return TupleValue(list(base.items[slice(*bounds)]))

    def select_item(self, tup: TupleValue, idx: ir.Expr, node) -> ir.Expr:
        """`t[k]` with k known only at run time (`OFFS[k]`, `for off in OFFS`): Numba allows it on a tuple of one
        type and compiles a switch over k, with -n .. -1 counting from the end; here a chain of conditionals
        (the last item also stands for an index out of range, where Numba raises an IndexError)."""
        items = tup.items
        if items and all(isinstance(v, TupleValue) for v in items) and len({len(v.items) for v in items}) == 1:
            # `OFFS[k]` of a tuple of equal tuples (a lattice's velocity set): per position, the switch over k
            return TupleValue([self.select_item(TupleValue([v.items[j] for v in items]), idx, node)
                               for j in range(len(items[0].items))])
        if not items or not all(isinstance(v, ir.Expr) for v in items):
            raise Unsupported(node, "tuple index", "a tuple of arrays, or of tuples of different lengths, is "
                              "indexed with an integer constant only", "unpack the tuple instead: a, b = t")
        if m.findall(node.slice[0], m.Call()):  # the chain reads the index once per item
            raise Unsupported(node, "tuple index", "an index that calls a function is read once per item here",
                              "bind the index first: k = ...; t[k]")
        chosen = items[-1]
        for k in range(len(items) - 2, -1, -1):
            hit = ir.Compare("==", idx, const_expr(k, node))
            if not (isinstance(idx, ir.Name) and idx.name in self.counters):
                hit = ir.BoolOp("or", [hit, ir.Compare("==", idx, const_expr(k - len(items), node))])
            chosen = ir.IfExp(hit, items[k], chosen)
        return chosen

    def tuple_copy(self, tup: TupleValue) -> TupleValue:
        """TUP with a new ir.Name for each local it holds (nested tuples too), the rest shared: each use of a
        tuple variable gets Name nodes of its own, since dataflow marks every Name with its reaching definitions."""
        return TupleValue([ir.Name(v.name) if type(v) is ir.Name else self.tuple_copy(v) if isinstance(v, TupleValue)
                           else v for v in tup.items], tup.names)
