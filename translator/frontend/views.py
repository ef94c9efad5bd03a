"""Subscripts of arrays -> elements and views (mixed into the expression lowerer): `a[i, j]`, a row `a[i]`, a
slice that is one contiguous piece of an array, a window `a[i:i+3, j:j+3]` and a strided view `a[:, j]` or
`x[::-1]`, each a pointer at an offset with its extents (a window: and its pitch; a strided view: and its step);
and stores into a view (`row[1:] = 0`, `p[:2] = x, y`)."""

from __future__ import annotations

import libcst as cst

from ..errors import Unsupported
from ..ir import intrinsics
from ..ir import nodes as ir
from ..ir import typesys as T
from ..ir.facts import is_pure
from .expr import Dim3, GridGroup, TupleValue, TypeValue, const_expr


class ArrayViewLowerer:
    """Needs, from the class it is mixed into: info, value(), expr(), shape_of(), fresh_name(), counters,
    write_through()."""

    def index_array(self, base: ir.ArrayVar, indices, node):
        """base[indices]: an element, or a row view when fewer indices than dimensions are given.

        An unnamed view indexed again (`A[r][i]`, `tile[a][b]`, `res[g:][0]`) is folded into one access of
        the array it views, as Numba's view-then-index reads the same element."""
        if base.kind == "view" and not base.name:
            if getattr(base, "row_of", None) is not None:
                root, prior = base.row_of
                return self.index_array(root, prior + indices, node)
            start = getattr(base, "slice_start", None)
            if start is not None and len(indices) == 1 and isinstance(indices[0], ir.Const) \
                    and isinstance(indices[0].value, int) and indices[0].value >= 0:
                # a constant index into a slice needs no wraparound: res[g:][k] is res[g + k]
                k = indices[0]
                return self.index_array(base.base, [start if k.value == 0 else ir.BinOp("+", start, k)], node)
        shown = base.name or self.info.code(getattr(node, "value", node))  # an atomic passes its call
        if len(indices) > base.ndim:
            raise Unsupported(node, "too many indices", f"'{shown}' has {base.ndim} dimension(s)")
        if len(indices) < base.ndim:
            return self.row_view(base, indices, node)
        return ir.Load(base, indices)

    def index_list(self, node):
        out = []
        for el in node.slice:
            v = self.value(el.slice.value)
            out.extend(v.items if isinstance(v, TupleValue) else [v])
        for v in out:
            if isinstance(v, (ir.ArrayVar, Dim3, TupleValue, TypeValue, GridGroup)):
                raise Unsupported(node, "array index", "indices must be integers",
                                  "index with integer expressions such as a[i, j]")
        return out

    def row_view(self, base: ir.ArrayVar, indices, node):
        column = self.column_of_transpose(base, indices)
        if column is not None:
            return column
        self.no_view_of_fortran(base, node)
        if base.kind == "dynamic":
            raise Unsupported(node, "partial indexing", f"'{base.name}' cannot be viewed row by row",
                              "index every dimension: a[i, j]")
        offset = None
        for d, idx in enumerate(indices):
            stride = None
            for k in range(d + 1, base.ndim):
                s = self.step_extent(base, k)
                stride = s if stride is None else ir.BinOp("*", stride, s)
            if isinstance(idx, ir.Const) and idx.value == 0 and not idx.name:
                continue  # row 0 starts where the array does
            idx = _wrapped(idx, lambda: self.shape_of(base, d))  # a[-1] is the last row
            term = idx if stride is None else ir.BinOp("*", idx, stride)  # stride None: a record's own element
            offset = term if offset is None else ir.BinOp("+", offset, term)
        shape = [self.shape_of(base, k) for k in range(len(indices), base.ndim)]
        view = ir.ArrayVar("", base.dtype, shape, "view", base=base, offset=_stepped(offset, base))
        if base.pitch is not None:
            view.pitch = [None] + base.pitch[len(indices) + 1:]
        view.step = base.step
        view.row_of = (base, list(indices))
        return view

    def column_of_transpose(self, base: ir.ArrayVar, indices):
        """Row k of `a.T` is `a[:, k]` (a sudoku solver's `for col in b.T:`): a strided view of the array
        transposed, its elements a row apart, where that array lies row by row. None for other arrays."""
        source = base.base
        if not (base.fortran and base.kind == "view" and base.offset is None and len(indices) == 1
                and source is not None and source.ndim == 2 and not source.fortran and source.pitch is None
                and source.step is None):
            return None
        k = _wrapped(indices[0], lambda: self.shape_of(source, 1))  # b.T[-1] is b's last column
        view = ir.ArrayVar("", source.dtype, [self.shape_of(source, 0)], "view", base=source, offset=k)
        view.pitch = [None]
        view.step = self.step_extent(source, 1)
        return view

    def no_view_of_fortran(self, base: ir.ArrayVar, node):
        """A column-major array's rows and slices are strided views the other way round: only its elements are
        read here."""
        if base.fortran:  # at the array's name: a loop over rows subscripts it out of sight (loops.py)
            where = node.value if isinstance(node, cst.Subscript) else node
            raise Unsupported(where, f"view of the column-major array '{base.name}'", "numba2cuda indexes a Fortran-"
                              "order array element by element, not by rows, slices or windows",
                              f"index every dimension ({base.name}[i, j]), or pass a C-contiguous array "
                              f"(np.ascontiguousarray), typed {base.dtype}[{', '.join([':'] * (base.ndim - 1))}, ::1]")

    def step_extent(self, arr: ir.ArrayVar, d: int) -> ir.Expr:
        """What one step of dimension d - 1 moves over: dimension d's extent, or a window's pitch."""
        return arr.pitch[d] if arr.pitch is not None else self.shape_of(arr, d)

    def fill_view(self, view: ir.ArrayVar, target, value_node) -> list:
        """`a[:, :] = 0`, `row[1:] = x` (pyfk zeroes its local arrays so): Numba's setitem of a number into a
        slice or row stores it in every element, the number evaluated once; here a loop nest over the view."""
        value = self.value(value_node)
        if isinstance(value, TupleValue):
            return self.store_items(view, target, value, value_node)
        if isinstance(value, ir.ArrayVar):
            # measured with compile_ptx: "NRT required but not enabled" (Numba copies the source array first)
            raise Unsupported(value_node, "assignment of an array to a slice or row", "Numba copies the array "
                              "first, which needs its runtime (NRT), off in numba-cuda unless enabled; numba2cuda "
                              "does not copy arrays", "loop over the elements: a[i, j] = b[i, j]")
        if not isinstance(value, ir.Expr):
            raise Unsupported(value_node, "assignment of this value to a slice or row", "only a number, a tuple "
                              "of numbers or an array is stored into one here", "assign element by element")
        self.write_through(view, target)
        out, held = [], value
        if not isinstance(value, (ir.Const, ir.Name)):
            held = ir.Name(self.fresh_name("fill", 1))
            out.append(ir.Assign(target=held, value=value))
        counters = [self.fresh_name(f"k{d}") for d in range(view.ndim)]
        self.counters.update(counters)
        store = ir.Store(target=ir.Load(view, [ir.Name(c) for c in counters]),
                         value=ir.Name(held.name) if isinstance(held, ir.Name) else held)
        return out + [self.loop_nest(view, counters, store)]

    def loop_nest(self, arr: ir.ArrayVar, counters: list, stmt, node=None):
        """STMT inside one range loop per dimension of ARR, COUNTERS[d] running over its extent d."""
        for d in reversed(range(arr.ndim)):
            loop = ir.ForRange(target=ir.Name(counters[d]), start=const_expr(0), stop=self.shape_of(arr, d),
                               step=const_expr(1), body=[stmt])
            loop.given = 1
            if node is not None:
                loop.node = node
            stmt = loop
        return stmt

    def store_items(self, view: ir.ArrayVar, target, value: TupleValue, value_node) -> list:
        """`p[:2] = x + vx * dt, y + vy * dt` (a neutron tracer's state row): Numba stores a sequence into a 1-D
        slice item by item, the whole tuple evaluated first. Numba raises where the lengths differ; here the
        items past the slice's end are not stored."""
        if view.ndim != 1 or any(not isinstance(v, ir.Expr) for v in value.items):
            raise Unsupported(value_node, "assignment of a tuple to a slice", "a tuple of numbers is stored into a "
                              "1-D slice or row here", "assign element by element")
        self.write_through(view, target)
        out, held = [], []
        for item in value.items:
            if not isinstance(item, (ir.Const, ir.Name)):
                temp = self.fresh_name("item", 1)
                out.append(ir.Assign(target=ir.Name(temp), value=item))
                item = ir.Name(temp)
            held.append(item)
        for k, item in enumerate(held):
            store = ir.Store(target=ir.Load(view, [const_expr(k, value_node)]), value=item)
            out.append(ir.If(cond=ir.Compare("<", const_expr(k, value_node), self.shape_of(view, 0)), body=[store]))
        return out

    def slice_view(self, base: ir.ArrayVar, node):
        """A slice that is one contiguous piece of the array: integer indices first, then one slice, then only
        full slices (`a[g:]`, `R[0, :]`, `a[i, 2:5]`, `a[r0:r1, :]`), as a view at an offset. Other slices
        (`a[i:j, k:l]`) are windows, whose rows lie further apart than their extents say."""
        self.no_view_of_fortran(base, node)
        els = list(node.slice)
        if len(els) > base.ndim:
            raise Unsupported(node, "too many indices", f"'{base.name or self.info.code(node.value)}' has "
                              f"{base.ndim} dimension(s)")
        k = 0
        while k < len(els) and isinstance(els[k].slice, cst.Index):
            k += 1
        if not all(isinstance(e.slice, cst.Slice) and _is_full(e.slice) for e in els[k + 1:]):
            return self.window(base, els, node)
        src = self.index_array(base, self.index_list(cst.Subscript(node.value, els[:k])), node) if k else base
        sl = els[k].slice
        if sl.step is not None and not (isinstance(sl.step, cst.Integer) and sl.step.evaluated_value == 1):
            if src.ndim == 1:
                return self.stepped_view(src, sl, node)
        if _is_full(sl):
            return src
        start, length = self.slice_bounds(sl, self.shape_of(src, 0), node)
        rest = [self.shape_of(src, d) for d in range(1, src.ndim)]
        offset = start
        for d in range(1, src.ndim):  # a slice of the first of several dimensions starts start rows in
            offset = ir.BinOp("*", offset, self.step_extent(src, d))
        view = ir.ArrayVar("", base.dtype, [length] + rest, "view", base=src, offset=_stepped(offset, src))
        if src.pitch is not None:
            view.pitch = list(src.pitch)
        view.step = src.step
        if src.ndim == 1:
            view.slice_start = start
        return view

    def window(self, base: ir.ArrayVar, els: list, node):
        """`a[i-1:i+2, j-1:j+2]` (a stencil's neighbourhood), `a[:, j]` (a column), `a[0:3, x, y]`: a view
        whose elements lie further apart than its own extents say, as Numba's strided views do. Its elements
        stay where they are: a pointer to the corner, the window's extents, per dimension the extent one step
        moves over (the pitch), and where it ends on an integer index, what one step of its last dimension moves
        over (its step)."""
        self.no_view_of_fortran(base, node)
        els = els + [cst.SubscriptElement(cst.Slice(None, None))] * (base.ndim - len(els))
        offset, shape, pitch, step = None, [], [], None
        for d, el in enumerate(els):
            if d:  # what one step of dimension d - 1 moves over, from the dimension before the window's next one
                stride = self.step_extent(base, d)
                step = stride if step is None else ir.BinOp("*", step, stride)
            if isinstance(el.slice, cst.Index):
                # a[:, -1]: the last column
                start, length = _wrapped(self.expr(el.slice.value), lambda: self.shape_of(base, d)), None
            else:
                start, length = self.slice_bounds(el.slice, self.shape_of(base, d), node)
            if offset is not None and d:
                offset = ir.BinOp("*", offset, self.step_extent(base, d))
            if not (isinstance(start, ir.Const) and start.value == 0 and not start.name):
                offset = start if offset is None else ir.BinOp("+", offset, start)
            if length is not None:
                shape.append(length)
                pitch.append(step)
                step = None
        # what the dimensions after the last slice multiply: the step of a view ending on an integer index
        if base.step is not None:
            step = base.step if step is None else ir.BinOp("*", step, base.step)
        view = ir.ArrayVar("", base.dtype, shape, "view", base=base, offset=_stepped(offset, base))
        view.pitch = [None] + pitch[1:]
        view.step = step
        return view

    def stepped_view(self, base: ir.ArrayVar, sl: cst.Slice, node) -> ir.ArrayVar:
        """`buf[::-1]`, `a[1::2]` (numba-cuda's shared-memory tests write a slice backwards): a 1-D view whose
        elements lie STEP apart (a constant), counted from the clipped start as Python counts them."""
        step = self.expr(sl.step)
        if not (isinstance(step, ir.Const) and isinstance(step.value, int) and step.value != 0):
            raise Unsupported(sl.step, "slice step", "a step other than 1 must be a nonzero integer constant here")
        if base.ndim != 1:
            raise Unsupported(sl.step, "slice step", "a step other than 1 slices a 1-D array or view here",
                              "take the row first: a[i][::2]")
        extent = self.shape_of(base, 0)
        bounds = []
        for bound, default in ((sl.lower, None), (sl.upper, -1)):
            value = self.computed_once(self.expr(bound), bound, "slice bound") if bound is not None else None
            if value is not None and not _not_negative(value):  # `buf[-1::-2]` counts from the end
                value = ir.Call(intrinsics.SLICE_BOUND, [value, extent, step])
            if value is None:
                value = const_expr(0, node) if step.value > 0 and default is None else \
                    ir.BinOp("-", extent, const_expr(1, node)) if default is None else \
                    extent if step.value > 0 else const_expr(-1, node)
            bounds.append(value)
        start = ir.Call(SLICE_START, [bounds[0], step, extent])
        length = ir.Call(SLICE_COUNT, [bounds[0], bounds[1], step, extent])
        view = ir.ArrayVar("", base.dtype, [length], "view", base=base, offset=_stepped(start, base))
        view.pitch = [None]
        view.step = step if base.step is None else ir.BinOp("*", step, base.step)
        return view

    def computed_once(self, value, node, what: str, name: str = "bound"):
        """VALUE, where it has an effect (`a[cuda.atomic.add(c, 0, 1):]`, an inlined view function's argument)
        computed once, into a local before the statement, as Python computes it once: the view it makes reads it
        more than once (its offset, its length)."""
        if not isinstance(value, ir.Expr) or is_pure(value):
            return value
        if self.conditional:
            raise Unsupported(node, f"{what} with an effect", "it is computed under a condition here (a loop's "
                              "test, a conditional expression), and the view it makes reads it more than once",
                              "compute it into a variable first")
        temp = self.fresh_name(name, 1)
        self.hoisted.append(ir.Assign(target=ir.Name(temp), value=value))
        return ir.Name(temp)

    def slice_bounds(self, sl: cst.Slice, extent: ir.Expr, node):
        """A slice's start and length within EXTENT: step 1, nonnegative bounds. Python clips the stop at the
        extent (`a[i:i + 3]` near the end is shorter), so the length does too unless the stop cannot pass it."""
        if sl.step is not None:
            step = self.expr(sl.step)
            if not (isinstance(step, ir.Const) and step.value == 1):
                raise Unsupported(sl.step, "slice step", "a step other than 1 slices a 1-D array or view here",
                                  "take the row first: a[i][::2]")
        start = self.computed_once(self.expr(sl.lower), sl.lower, "slice bound") if sl.lower is not None \
            else const_expr(0)
        stop = self.computed_once(self.expr(sl.upper), sl.upper, "slice bound") if sl.upper is not None else extent
        # `a[:-1]` counts from the end, and a bound read at run time may be negative (CSR offsets of a graph
        # library are not, but Numba does not know that): normalised as Python's slice normalises it, where the
        # legalizer cannot prove it is not
        start, stop = (b if b is extent or _not_negative(b) else _from_end(b, extent) for b in (start, stop))
        consts = [b.value if isinstance(b, ir.Const) and isinstance(b.value, int) else None
                  for b in (start, stop, extent)]
        if None not in consts:
            return start, const_expr(len(range(consts[2])[consts[0]:consts[1]]), node)
        if sl.upper is None:  # `a[g:]`: read as running to the end (a start past it, which Python empties,
            # gives a negative length, which a loop over the view treats alike)
            return start, extent if consts[0] == 0 else ir.BinOp("-", extent, start)
        return start, ir.Call(SLICE_LEN, [start, stop, extent])  # its helper: where printing needs it


# a view's length is printed only where the kernel reads it, so its helper is taken only then (CPrinter)
SLICE_LEN = intrinsics.Intrinsic("slice_len", lambda ts: "n2c::slice_len", lambda ts: T.INT64, (3, 3),
                                 helper="slice_len", arg_types=lambda ts: [T.INT64] * 3)
SLICE_START = intrinsics.Intrinsic("slice_start", lambda ts: "n2c::slice_start", lambda ts: T.INT64, (3, 3),
                                   helper="slice_step", arg_types=lambda ts: [T.INT64] * 3)
SLICE_COUNT = intrinsics.Intrinsic("slice_count", lambda ts: "n2c::slice_count", lambda ts: T.INT64, (4, 4),
                                   helper="slice_step", arg_types=lambda ts: [T.INT64] * 4)


def _wrapped(index: ir.Expr, extent) -> ir.Expr:
    """INDEX wrapped around the dimension EXTENT() gives as Numba wraps a negative index, unless it is a constant
    that is not negative (the extent is not asked then: a pointer has none); the legalizer drops the wrap where it
    proves the index is not negative."""
    if _not_negative(index):
        return index
    return ir.Call(intrinsics.WRAP_INDEX, [index, extent()])


def _not_negative(bound: ir.Expr) -> bool:
    return isinstance(bound, ir.Const) and isinstance(bound.value, int) and bound.value >= 0


def _from_end(bound: ir.Expr, extent: ir.Expr) -> ir.Expr:
    """A slice bound of step 1 that may be negative, counted from the end as Python counts it; a constant one of
    a constant extent is folded."""
    if isinstance(bound, ir.Const) and isinstance(extent, ir.Const) and isinstance(extent.value, int):
        return const_expr(max(bound.value + extent.value, 0))
    return ir.Call(intrinsics.SLICE_BOUND, [bound, extent])


def _stepped(offset, base: ir.ArrayVar):
    """An offset counted in the flat index of BASE, in elements: a strided array's flat index steps further."""
    if offset is None or base.step is None:
        return offset
    return ir.BinOp("*", offset, base.step)


def _is_full(sl: cst.Slice) -> bool:
    return sl.lower is None and sl.upper is None and sl.step is None
