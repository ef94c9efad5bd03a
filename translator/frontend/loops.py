"""`for` over arrays and tuples -> loops (mixed into the statement lowerer): Numba's element loops as range loops
with a load per element (`for v in a`, `for x, y in zip(a, b)` (ranges too), `for k, v in enumerate(a)`,
`enumerate(zip(...))`), tuple loops by index, and literal_unroll's body once per item."""

from __future__ import annotations

import libcst as cst

from ..errors import Unsupported
from ..ir import nodes as ir
from .expr import TupleValue, const_expr
from .scan import find_nodes


class ElementLoopLowerer:
    """Needs, from the class it is mixed into: info, scope, scalar_names, fresh_name(), statement(), stmt_For()."""

    def element_loop(self, stmt: cst.For) -> list | None:
        """The loop over the elements of 1-D arrays or views STMT writes, lowered as
        `for k in range(min(len(a), len(b))): x = a[k]; y = b[k]` (lengths read once, as Numba's iterators do),
        or None when STMT iterates something else (range, a tuple)."""
        target, it, index = stmt.target, stmt.iter, None
        unpacked = isinstance(target, cst.Tuple) and all(isinstance(el.value, cst.Name) for el in target.elements)
        if (isinstance(target, cst.Name) or unpacked) and (isinstance(it, (cst.Name, cst.Tuple, cst.Attribute))
                                                           or self._builtin_call(it, "tuple")):
            tup = self.value(it)
            if isinstance(tup, TupleValue):
                return self.tuple_loop(stmt, it, tup)
        if self._builtin_call(it, "enumerate") and len(it.args) == 1 and isinstance(target, cst.Tuple) \
                and len(target.elements) == 2 and isinstance(target.elements[0].value, cst.Name):
            index = target.elements[0].value.value
            target, it = target.elements[1].value, it.args[0].value
        zipped = self._builtin_call(it, "zip") and bool(it.args)
        iterables = [a.value for a in it.args] if zipped else [it]
        if zipped:
            if not (isinstance(target, cst.Tuple) and len(target.elements) == len(iterables)
                    and all(isinstance(el.value, cst.Name) or self._enumerated(it, el.value)
                            for it, el in zip(iterables, target.elements))):
                raise Unsupported(target, "for loop target", f"zip() gives {len(iterables)} items: unpack them "
                                  f"into {len(iterables)} names (an enumerate() of them into two)",
                                  "for x, y in zip(a, b): ...")
            targets = [el.value for el in target.elements]
        elif isinstance(target, cst.Name):
            targets = [target]
        elif isinstance(target, cst.Tuple) and all(isinstance(el.value, cst.Name) for el in target.elements):
            # `for x, y in points`: each row unpacked, as Numba does (enumerated too: a cellular automaton's
            # `for k, (dr, dc) in enumerate(neighbourhood)`)
            targets = [target]
        elif index is None:
            return None
        else:
            raise Unsupported(target, "for loop target", "only a name can take each element",
                              "for k, v in enumerate(a): ...")
        hint = find_nodes(targets[0], lambda n: isinstance(n, cst.Name), first=True)[0].value
        prelude, lengths, items = [], [], []
        for node, target in zip(iterables, targets):
            if isinstance(target, cst.Tuple) and zipped:  # `(i, x)` of enumerate(a) inside zip(): i is the counter
                node = node.args[0].value
                items.append(lambda k: k)
                target = target.elements[1].value
            if (zipped or index is not None) and self._builtin_call(node, "range"):  # enumerate(range(a, b))
                length, item = self._range_items(node, prelude, stmt, target.value)
                lengths.append(length)
                items.append(item)
                continue
            if (zipped or index is not None) and isinstance(node, cst.Name) and node.value not in self.scope and \
                    isinstance(self.value(node), TupleValue):
                # zip() or enumerate() of a tuple (`for i, j in zip(t1, t2)`, `for i, v in enumerate(tup)` of a
                # test's constants): indexed as a tuple loop is
                lengths.append(cst.Call(cst.Name("len"), [cst.Arg(node)]))
                items.append(lambda k, a=node: cst.Subscript(a, [cst.SubscriptElement(cst.Index(k))]))
                continue
            name = self._array_name(node, prelude, stmt, hint)
            if name is None:
                if zipped or index is not None or prelude:
                    what = "zip()" if zipped else "enumerate()"
                    raise Unsupported(node, f"{what} of this iterable", "only 1-D arrays and their views are "
                                      "iterated here", "loop over indices: for i in range(len(a)): x = a[i]")
                return None
            # a 2-D array yields its rows, each a view (`for row in nb: g[row[0], row[1]]`)
            lengths.append(cst.Call(cst.Name("len"), [cst.Arg(name)]))
            items.append(lambda k, a=name: cst.Subscript(a, [cst.SubscriptElement(cst.Index(k))]))
        rows = isinstance(targets[0], cst.Tuple) and not zipped  # a row's items, bound by one unpacking
        if not rows:
            targets = [n for t in targets for n in ([el.value for el in t.elements] if isinstance(t, cst.Tuple)
                                                    else [t])]
        counter = cst.Name(index or self.fresh_name(f"{hint}_index"))
        stop = lengths[0] if len(lengths) == 1 else cst.Call(cst.Name("min"), [cst.Arg(n) for n in lengths])
        loads = [cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(t)], item(counter))])
                 for t, item in zip(targets, items)]
        loop = stmt.with_changes(target=counter, iter=cst.Call(cst.Name("range"), [cst.Arg(stop)]),
                                 body=stmt.body.with_changes(body=[*loads, *stmt.body.body]))
        self.located_at(stmt.iter, [loop.target, loop.iter, *loads])
        lowered = self.stmt_For(loop)
        for load in lowered[0].body[:len(targets[0].elements) if rows else len(loads)]:
            load.node = stmt  # the element loads belong to the `for` line
        return prelude + lowered

    def located_at(self, where, made) -> None:
        """The nodes this lowering MADE (a loop's counter and its element loads) are located where WHERE is, so a
        problem with them (a row of a column-major array) is reported at the iterable, not at line 1; what the
        user wrote inside them keeps its own place."""
        pairs = [(where, n) for tree in made for n in find_nodes(tree, lambda n: True)]
        self.info.reporter.relocate(pairs)

    def _enumerated(self, iterable, target) -> bool:
        """`(i, x)` taking enumerate(a) inside a zip()."""
        return self._builtin_call(iterable, "enumerate") and len(iterable.args) == 1 \
            and isinstance(target, cst.Tuple) and len(target.elements) == 2 \
            and all(isinstance(el.value, cst.Name) for el in target.elements)

    def unrolled_loop(self, stmt: cst.For, it: cst.Call) -> list:
        """`for arr in literal_unroll(arrays)` (numba-cuda's reduction tests, a tuple of arrays of several sizes):
        Numba compiles the body once per item, each with the item's own type; here the body once per item, the
        name bound to it, each copy a loop of one trip so that `continue` goes on to the next item."""
        if len(it.args) != 1 or it.args[0].keyword is not None:
            raise Unsupported(it, "literal_unroll()", "takes one tuple")
        tup = self.value(it.args[0].value)
        if not isinstance(tup, TupleValue):
            raise Unsupported(it, "for loop over literal_unroll()", "it unrolls a tuple here",
                              "pass the tuple itself: literal_unroll(t)")
        if all(isinstance(v, ir.Expr) and not isinstance(v, ir.ArrayVar) for v in tup.items):
            return self.tuple_loop(stmt, it.args[0].value, tup)  # one type: Numba's loop over a tuple
        if not all(isinstance(v, ir.ArrayVar) for v in tup.items):
            raise Unsupported(it, "for loop over literal_unroll()", "numba2cuda unrolls a tuple of numbers or of "
                              "arrays", "write the body once per item")
        if find_nodes(stmt.body, lambda n: isinstance(n, cst.Break),
                      enter=lambda n: not isinstance(n, (cst.For, cst.While, cst.FunctionDef))):
            raise Unsupported(it, "break in a loop over literal_unroll()", "numba2cuda unrolls the loop, one copy "
                              "of the body per item", "use a flag the rest of the body tests")
        name = stmt.target.value
        out = []
        for item in tup.items:
            self.scope[name] = item
            trip = self.fresh_name(f"{name}_copy")
            self.loop_depth += 1
            body = self.block(stmt.body)
            self.loop_depth -= 1
            loop = ir.ForRange(target=ir.Name(trip), start=const_expr(0), stop=const_expr(1), step=const_expr(1),
                               body=body)
            loop.given = 1
            out.append(loop)
        return out

    def tuple_loop(self, stmt: cst.For, it, tup: TupleValue) -> list:
        """`for off in (16, 8, 4, 2, 1)`, `for d in OFFSETS`, `for x in t` (a UniTuple parameter): Numba iterates a
        tuple of one type by index, so `for k in range(len(t)): off = t[k]` (t bound to a name first). A tuple of
        equal tuples unpacks each (`for dx, dy in ((0, 1), (1, 0))`: `dx, dy = t[k]`, a switch per position)."""
        unpacked = isinstance(stmt.target, cst.Tuple)
        first = tup.items[0] if tup.items else None
        size = len(stmt.target.elements) if unpacked else len(first.items) if isinstance(first, TupleValue) else None
        numbers = (lambda v: isinstance(v, TupleValue) and len(v.items) == size
                   and all(isinstance(x, ir.Expr) for x in v.items)) if size is not None else \
            (lambda v: isinstance(v, ir.Expr))
        if not all(numbers(v) for v in tup.items):
            if unpacked:
                raise Unsupported(stmt.target, "for loop target", "unpacks each item of the tuple, so every item "
                                  f"must be a tuple of {len(stmt.target.elements)} numbers",
                                  "for dx, dy in ((0, 1), (1, 0)): ...")
            raise Unsupported(stmt.iter, "for loop over a tuple of arrays", "only a tuple of numbers is iterated here "
                              "(or of tuples of numbers, all of one length)",
                              "write the loop's body once for each array (or call a device function with each)")
        hint = stmt.target.elements[0].value.value if unpacked else stmt.target.value
        prelude = []
        if not isinstance(it, cst.Name):
            name = self.fresh_name(f"{hint}_items", 1)
            for s in self.statement(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], it)])):
                s.node = stmt
                prelude.append(s)
            it = cst.Name(name)
        counter = self.fresh_name(f"{hint}_index")
        self.counters.add(counter)
        load = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(stmt.target)],
                                                   cst.Subscript(it, [cst.SubscriptElement(cst.Index(cst.Name(counter)))]))])
        loop = stmt.with_changes(target=cst.Name(counter), iter=cst.Call(cst.Name("range"), [cst.Arg(cst.Integer(str(len(tup.items))))]),
                                 body=stmt.body.with_changes(body=[load, *stmt.body.body]))
        lowered = self.stmt_For(loop)
        for load in lowered[0].body[:size or 1]:
            load.node = stmt  # the item's loads belong to the `for` line
        return prelude + lowered

    def _range_items(self, node: cst.Call, prelude: list, stmt, hint: str):
        """range(start, stop[, step]) zipped with other iterables (PyLops: zip(range(a, b), range(c, d))): its
        length and its k-th item, `start + k * step`, start and stop read once before the loop as Numba's range
        iterator reads them. The step must be an integer literal (its sign decides the length's formula)."""
        args = [a.value for a in node.args]
        if not 1 <= len(args) <= 3:
            raise Unsupported(node, "range()", "takes 1 to 3 arguments")
        start, stop = (cst.Integer("0"), args[0]) if len(args) == 1 else (args[0], args[1])
        step = 1
        if len(args) == 3:
            text = self.info.code(args[2]).replace(" ", "")
            if not text.lstrip("-").isdigit() or int(text) == 0:
                raise Unsupported(args[2], "range() step in zip()", "only a nonzero integer literal step is "
                                  "supported there", "loop over indices: for k in range(n): ...")
            step = int(text)
        bound = []
        for part, value in (("start", start), ("stop", stop)):
            name = self.fresh_name(f"{hint}_{part}", 1)
            line = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)])
            for s in self.statement(line):
                s.node = stmt
                prelude.append(s)
            bound.append(cst.Name(name))
        lo, hi = bound if step > 0 else bound[::-1]
        span = cst.BinaryOperation(hi, cst.Subtract(), lo)
        if abs(step) != 1:
            span = cst.BinaryOperation(cst.BinaryOperation(span, cst.Add(), cst.Integer(str(abs(step) - 1))),
                                       cst.FloorDivide(), cst.Integer(str(abs(step))))
        length = cst.Call(cst.Name("max"), [cst.Arg(cst.Integer("0")), cst.Arg(span)])

        def item(k, first=bound[0]):
            offset = k if step == 1 else cst.BinaryOperation(k, cst.Multiply(), cst.Integer(str(step)) if step > 0
                                                              else cst.UnaryOperation(cst.Minus(),
                                                                                      cst.Integer(str(-step))))
            return cst.BinaryOperation(first, cst.Add(), offset)
        return length, item

    def _builtin_call(self, node, name: str) -> bool:
        return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == name and \
            name not in self.scalar_names and name not in self.scope and \
            all(a.keyword is None and not a.star for a in node.args)

    def _array_name(self, node, prelude: list, stmt, hint: str):
        """NODE as the name of an array: itself, or a fresh name bound to the view it makes (`a[i]`) or to the
        module's array it names."""
        if isinstance(node, cst.Name) and node.value in self.scope:
            return node if isinstance(self.scope.get(node.value), ir.ArrayVar) else None
        if not isinstance(node, (cst.Subscript, cst.Name, cst.Attribute)):  # a module's array: LIMITS, geom.LIMITS
            return None
        view = self.fresh_name(f"{hint}_items", 1)
        bound = self.statement(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(view))], node)]))
        if not isinstance(self.scope.get(view), ir.ArrayVar):
            return None
        for s in bound:
            s.node = stmt
        prelude.extend(bound)
        return cst.Name(view)
