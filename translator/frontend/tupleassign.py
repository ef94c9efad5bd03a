"""Tuples in assignments (`a, b = f(...)`, `u[i], v[i] = ...`, tuple variables, a device function's tuple result
kept in a name) -> KernelIR statements: one local per item; and assignments of one value to several targets
(`a[i] = v = a[i] + 1.0`).

A mixin of stmt.FunctionLowerer, next to assign.AssignLowerer, which dispatches here.
"""

from __future__ import annotations

import libcst as cst

from ..errors import Poisoned, Unsupported
from ..ir import nodes as ir
from ..ir.facts import decided_test, mentions
from .assign import is_stable
from .expr import TupleValue, const_expr
from .names import dotted
from .scan import find_nodes
from .shapes import count_numbers, flatten, nest, shape_of


class TupleAssignLowerer:
    """Needs, from the class it is mixed into: info, scope, scalar_names, assign_counts, tuple_vars, block_local,
    tmp_count, fresh_name, value(), poison(), bind(), assign(), index_array()."""

    def chained_assign(self, stmt: cst.Assign) -> list:
        """`a[i] = v = a[i] + 1.0`, `v = out[i] = draw(states, i)`: Python evaluates the value once, then binds the
        targets left to right. The value goes to a name target that no other target mentions (else to a fresh
        local), and the others take that name; a literal is written to each."""
        targets = [t.target for t in stmt.targets]
        value = stmt.value
        literal = isinstance(value, (cst.Integer, cst.Float, cst.Imaginary)) or (
            isinstance(value, cst.UnaryOperation) and isinstance(value.expression, (cst.Integer, cst.Float))) or (
            isinstance(value, cst.Name) and value.value in ("True", "False", "None"))
        if literal:
            return [s for t in targets for s in self.assign(t, value, stmt)]

        def reads(node, name) -> bool:
            return bool(find_nodes(node, lambda n: isinstance(n, cst.Name) and n.value == name, first=True))

        anchor = next((t for t in targets if isinstance(t, cst.Name) and not any(
            u is not t and reads(u, t.value) for u in targets)), None)
        if anchor is None:
            anchor = cst.Name(self.fresh_name("chained", 1))
        out = self.assign(anchor, value, stmt)
        for t in (t for t in targets if t is not anchor):
            out += self.assign(t, anchor, stmt)
        return out


    def hold_results(self, name, call: ir.DeviceCall, shape, target) -> list:
        """`ray_dir = matmul(R, P)` of a device function returning a tuple of SHAPE (shapes.tuple_shape: a ray
        tracer's vectors, or a tuple of them; None: a tuple numba2cuda cannot count): its numbers, unpacked into
        locals of their own, are the tuple the name holds (a tuple assigned again: written anew)."""
        # a binding whose value never leaves its block (Game of Flies' `acc`) is a tuple of its own, whatever the
        # name held elsewhere
        own = name in self.block_local and isinstance(self.scope.get(name, TupleValue([])), TupleValue)
        if shape is None or not own and name in self.scope and name not in self.tuple_vars:
            self.poison([name])
            held = "" if shape is None else ", and the name holds another value"
            raise self.rebinding(target, [name] if shape is not None else [], "tuple variable",
                                 f"must be unpacked where it is made: '{call.func_name}' returns several values{held}",
                                 f"unpack it: a, b = {call.func_name}(...)")
        if not own and (self.assign_counts.get(name, 0) > 1 or name in self.tuple_vars):
            # the call's results are all computed before any item is written: acc = scale(acc, 2) is safe
            items = self.tuple_locals(name, shape, target)
        else:
            items = [self.fresh_name(f"{name}_{k}", 1) for k in range(count_numbers(shape))]
            self.scope[name] = nest([ir.Name(n) for n in items], shape)
        return [ir.TupleCall(targets=[ir.Name(n) for n in items], call=call)]

    def assign_tuple_variable(self, name, value, node) -> list:
        """`pos = (i + k, j + l)` assigned on several branches or in a loop (cuSignal's convolutions): a tuple of
        numbers (or of tuples of them) Numba keeps in one variable; here one local per number, every assignment
        writing all of them."""
        items = flatten(value)
        if not value.items or items is None:
            raise self.rebinding(node, [name], f"'{name}' assigned more than once", "a tuple assigned more than "
                                 "once may hold only numbers", "use a new name for each tuple")
        return self.unpack([cst.Name(n) for n in self.tuple_locals(name, shape_of(value), node)], items)

    def tuple_locals(self, name, shape, node) -> list:
        """The locals a tuple variable's numbers live in (made at its first assignment), for a tuple of SHAPE."""
        locals_ = self.tuple_vars.get(name)
        if locals_ is None:
            if name in self.scope:
                raise self.rebinding(node, [name], f"'{name}' reassigned", "it already names an array or a cuda object")
            locals_ = self.tuple_vars[name] = [self.fresh_name(f"{name}_{k}") for k in range(count_numbers(shape))]
            self.tuple_shapes[name] = shape
        elif self.tuple_shapes[name] != shape:
            raise self.rebinding(node, [name], f"'{name}' reassigned", f"it held a tuple of "
                                 f"{_spell(self.tuple_shapes[name])} and now gets {_spell(shape)} (Numba gives a "
                                 "variable one type)")
        self.scope[name] = nest([ir.Name(n) for n in locals_], shape)  # again after a number took the name over
        return locals_

    def bind_tuple(self, name, value, node) -> list:
        """`ind = (i * n + j, k)` (an index kept for later, PyLops' Kirchhoff): a tuple holds the values it was
        made of, so each item that could change is copied into a local of its own where the tuple is made."""
        out: list = []

        def hold(tup, prefix):
            items = []
            for k, item in enumerate(tup.items):
                if is_stable(item):
                    items.append(item)
                elif isinstance(item, TupleValue):
                    items.append(hold(item, f"{prefix}_{k}"))
                elif isinstance(item, ir.Expr):
                    local = self.fresh_name(f"{prefix}_{k}")
                    out.append(ir.Assign(target=ir.Name(local), value=item))
                    items.append(ir.Name(local))
                else:
                    raise Unsupported(node, "tuple variable", "must be unpacked where it is made: it holds a "
                                      "value that is not a number, an array or a tuple", "write a, b = ... instead")
            return TupleValue(items)

        self.scope[name] = hold(value, name)
        return out

    def assign_tuple(self, target, value_node) -> list:
        if any(isinstance(el.value, cst.Subscript) for el in target.elements) and all(
                isinstance(el.value, (cst.Name, cst.Subscript)) for el in target.elements):
            return self.assign_through_temps(target, value_node)
        if any(isinstance(el.value, (cst.Tuple, cst.List)) for el in target.elements):
            return self.assign_nested(target, value_node)
        names = []
        for el in target.elements:
            if not isinstance(el.value, cst.Name):
                raise Unsupported(el.value, "tuple target", "only names can be unpacked into", "a, b = ...")
            names.append(el.value)
        if isinstance(value_node, cst.IfExp) and all(isinstance(arm, (cst.Tuple, cst.List)) for arm in (
                value_node.body, value_node.orelse)):
            # `first, second = (i, j) if i < j else (j, i)` (a lock order): each arm unpacked on its branch, as
            # Numba's IfExp of two tuples of one type evaluates only the chosen arm
            cond = self.expr(value_node.test)
            decided = decided_test(cond)
            if decided is not None:
                return self.assign_tuple(target, value_node.body if decided else value_node.orelse)
            return [ir.If(cond=cond, body=self.assign_tuple(target, value_node.body),
                          orelse=self.assign_tuple(target, value_node.orelse))]
        if isinstance(value_node, (cst.Tuple, cst.List)):
            values = [self.value(el.value) for el in value_node.elements]
        else:
            v = self.value(value_node)
            if isinstance(v, ir.DeviceCall) and isinstance(v.returned_array, TupleValue):
                # `afp, bfp = freeprecess(afp, bfp, ...)`: the arrays it was given, each kept where it was
                arrays = v.returned_array.items
                if len(arrays) != len(names):
                    raise Unsupported(target, "tuple unpacking", f"{len(names)} names for {len(arrays)} values")
                numbers = [n for n, arr in zip(names, arrays) if arr is None]  # what C returns, in order
                if any(n.value in self.scope for n in numbers):
                    raise self.rebinding(target, [n.value for n in numbers if n.value in self.scope],
                                         "tuple target", "cannot rebind an array or cuda object", "")
                call = [ir.TupleCall(targets=[ir.Name(n.value) for n in numbers], call=v)] if len(numbers) > 1 \
                    else self.unpack(numbers, [v]) if numbers else [ir.ExprStmt(value=v)]
                return call + [s for n, arr in zip(names, arrays) if arr is not None
                               and self.scope.get(n.value) is not arr for s in self.bind(n.value, arr, target)]
            shape = self.call_shape(v) if isinstance(v, ir.DeviceCall) else None
            if shape is not None and any(shape):
                # `rgb, p, r = trace(...)` of tuples: the call's numbers into locals, then each name its part
                if len(shape) != len(names):
                    raise Unsupported(target, "tuple unpacking", f"{len(names)} names for {len(shape)} values")
                out: list = []
                held = self.tuple_result(v, value_node, out)
                return out + self.unpack(names, held.items)
            if isinstance(v, ir.DeviceCall) or (isinstance(v, ir.Call) and v.intrinsic.tuple_result):
                if any(n.value in self.scope for n in names):
                    raise self.rebinding(target, [n.value for n in names if n.value in self.scope],
                                         "tuple target", "cannot rebind an array or cuda object", "")
                return [ir.TupleCall(targets=[ir.Name(n.value) for n in names], call=v)]
            if isinstance(v, ir.ArrayVar):
                # Numba unpacks an array by iterating it (a length other than len(names) raises there): its
                # first elements, or rows of a 2-D array
                values = [self.index_array(v, [const_expr(k, value_node)], value_node) for k in range(len(names))]
            elif not isinstance(v, TupleValue):
                raise Unsupported(value_node, "tuple unpacking", "the right side is not a tuple or an array")
            else:
                values = v.items
        if len(values) != len(names):
            raise Unsupported(target, "tuple unpacking", f"{len(names)} names for {len(values)} values")
        return self.unpack(names, values)

    def assign_nested(self, target, value_node) -> list:
        """`(px, py, pz), (nx, ny, nz) = planes[k]` (a neutron guide's plane: a point and a normal): every name of
        the nested targets gets its number of the tuple, all read before any is written."""
        prelude: list = []
        value = self.returned_value(value_node, prelude)  # a device function's tuple result into locals first
        names, values = [], []

        def pair(t, v):
            if isinstance(t, (cst.Tuple, cst.List)):
                if not isinstance(v, TupleValue) or len(v.items) != len(t.elements):
                    raise Unsupported(t, "tuple unpacking", f"{len(t.elements)} names for "
                                      + (f"{len(v.items)} values" if isinstance(v, TupleValue) else "one value"))
                for el, item in zip(t.elements, v.items):
                    pair(el.value, item)
            elif isinstance(t, cst.Name):
                names.append(t)
                values.append(v)
            else:
                raise Unsupported(t, "tuple target", "only names, and tuples of them, can be unpacked into",
                                  "(a, b), c = ...")

        pair(target, value)
        return prelude + self.unpack(names, values)

    def assign_through_temps(self, target, value_node) -> list:
        """`u[i], v[i] = f(...)`, `x[i], n = ...`: as Python does it, the whole right side first (into fresh
        locals), then each target from left to right, its index read then."""
        def temp(el):
            named = el.value.value if isinstance(el.value, cst.Subscript) else el.value
            return cst.Name(self.fresh_name(f"{dotted(named) or 'item'}_new".replace(".", "_"), 1))

        temps = [temp(el) for el in target.elements]
        out = self.assign_tuple(cst.Tuple([cst.Element(t) for t in temps]), value_node)
        for el, temp in zip(target.elements, temps):
            out.extend(self.assign(el.value, temp, None))
        return out

    def unpack(self, names, values) -> list:
        out, pending = [], []
        held_by = {n.value: self.scope.get(n.value) for n in names}
        if any(isinstance(v, ir.ArrayVar) and getattr(held_by[n.value], "kind", "") == "alias"
               for n, v in zip(names, values)):
            # `a, b = b, a` of two array names the program rebinds (pointers): each target's new array is read
            # before any is pointed anew
            held = []
            for v in values:
                if isinstance(v, ir.ArrayVar) and any(v is t for t in held_by.values()):
                    copy = self.fresh_name(f"{v.name}_was", 1)
                    self.scalar_names.discard(copy)
                    out.extend(self.bind_alias(copy, v, names[0]))
                    v = self.scope[copy]
                held.append(v)
            values = held
        targets = {n.value for n in names}
        needs_temps = len(names) > 1 and any(
            isinstance(v, ir.Expr) and mentions(v, targets) for v in values)
        for n, v in zip(names, values):
            if isinstance(self.scope.get(n.value), Poisoned):
                continue
            if isinstance(v, ir.ArrayVar) and getattr(held_by[n.value], "kind", "") == "alias":
                out.extend(self.bind_alias(n.value, v, n))
            elif not isinstance(v, ir.Expr):
                out.extend(self.bind(n.value, v, n))
            elif needs_temps:
                tmp = self.new_temp()
                out.append(ir.Assign(target=ir.Name(tmp), value=v))
                pending.append(ir.Assign(target=ir.Name(n.value), value=ir.Name(tmp)))
            else:
                out.append(ir.Assign(target=ir.Name(n.value), value=v))
        return out + pending

    def new_temp(self) -> str:
        name = f"tmp.{self.tmp_count}"  # no Python name can be it; lower/names.py spells it tmpN_ in C
        self.tmp_count += 1
        self.scalar_names.add(name)
        return name


def _spell(shape) -> str:
    if not any(shape):
        return str(len(shape))
    return "(" + ", ".join("1" if item is None else _spell(item) for item in shape) + ")"
