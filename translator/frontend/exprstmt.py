"""Expressions written as statements -> KernelIR statements: calls made for their effect, print(), a NumPy
ufunc given its output array, and the expressions Numba compiles to nothing (mixed into the function lowerer)."""

from __future__ import annotations

import libcst as cst

from ..errors import Unsupported
from ..ir import intrinsics
from ..ir import nodes as ir
from ..ir.facts import mark_written
from .expr import UNSUPPORTED_EXPRS
from .names import resolve


class ExpressionStatementLowerer:
    """Needs, from the class it is mixed into: info, fn, scalar_names, value(), expr(), is_breakpoint(), new_temp(),
    use_helper(), loop_nest()."""

    def expression_statement(self, small: cst.Expr, value: cst.BaseExpression | None = None) -> list:
        """SMALL's expression (or VALUE, one item of it), its notes located at SMALL."""
        value = small.value if value is None else value
        if isinstance(value, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)):
            return []  # a docstring or string used as a comment; `...` written for `pass`
        if isinstance(value, cst.Tuple) and any(isinstance(el.value, cst.Call) for el in value.elements) \
                and not any(isinstance(el, cst.StarredElement) for el in value.elements):
            # `print(x),` (Python 2's print with a trailing comma): a tuple made and dropped, its items evaluated
            # in order, as Numba compiles it
            return [s for el in value.elements for s in self.expression_statement(small, el.value)]
        if isinstance(value, cst.Call) and resolve(self.info, value.func) is None \
                and isinstance(value.func, cst.Name) and value.func.value == "print" \
                and "print" not in self.scalar_names:
            return [self.print_(value)]
        if isinstance(value, tuple(UNSUPPORTED_EXPRS)):
            self.value(value)  # `yield x`, `await f()`: named by their own error, not as a statement
        if isinstance(value, cst.Call) and self.is_breakpoint(value.func):
            self.fn.notices.append(self.info.reporter.make(value, f"{self.info.code(value)}", "the CUDA simulator's "
                                                           "debugger stops here; the translation runs on"))
            return []
        if not isinstance(value, cst.Call):
            # Numba compiles `out[i] == x[i]` or `cuda.syncthreads` to nothing, so the translation has nothing for
            # it either; a note says so, since it is most likely a slip (`=` meant, parentheses forgotten)
            if not isinstance(value, (cst.Name, cst.Attribute)):
                self.value(value)  # what it names must exist, as Numba's typing asks
            note = self.info.reporter.make(small, "expression statement", "has no effect: Numba compiles it to "
                                           "nothing, and so does the translation", "assign it (=), call it (()), "
                                           "or remove it")
            if note not in self.fn.notices:  # an item of `f(x), y` has the statement's note once
                self.fn.notices.append(note)
            return []
        ufunc = self.ufunc_into_array(value)
        if ufunc is not None:
            return ufunc
        v = self.value(value)
        if not isinstance(v, ir.Expr):  # `cuda.cg.this_grid()` alone: an object made and dropped
            return []
        return [ir.ExprStmt(value=v)]

    def ufunc_into_array(self, call: cst.Call):
        """`np.sin(x, r)`: a NumPy ufunc with its output array, which Numba runs over every element in this
        thread (r[...] = sin(x[...])); None when the call is something else."""
        canon = resolve(self.info, call.func)
        entry = intrinsics.lookup(canon) if canon and canon.startswith("np.") else None
        if entry is None or any(a.keyword is not None for a in call.args) or len(call.args) != entry.nargs[1] + 1:
            return None
        out = self.value(call.args[-1].value)
        if not isinstance(out, ir.ArrayVar):
            return None
        inputs = [self.value(a.value) for a in call.args[:-1]]
        for a, node in zip(inputs, call.args):
            if isinstance(a, ir.ArrayVar) and a.ndim > out.ndim:
                raise Unsupported(node, f"{canon}() input", f"has {a.ndim} dimensions, its output {out.ndim}",
                                  "pass an output array of the inputs' shape")
        counters = [self.new_temp() for _ in range(out.ndim)]
        index = [ir.Name(c) for c in counters]
        args = [ir.Load(a, index[out.ndim - a.ndim:]) if isinstance(a, ir.ArrayVar) else a for a in inputs]
        if entry.helper:
            self.use_helper(entry.helper)
        mark_written(out)
        stmt = ir.Store(target=ir.Load(out, list(index)), value=ir.Call(entry, args))
        stmt.node = call
        return [self.loop_nest(out, counters, stmt, call)]

    def print_(self, call: cst.Call) -> ir.Print:
        items = []
        for a in call.args:
            if a.keyword is not None:
                raise Unsupported(a, f"print(..., {a.keyword.value}=...)", "print keywords are not supported",
                                  "print the values only; items are separated by spaces")
            if isinstance(a.value, (cst.SimpleString, cst.ConcatenatedString)):
                items.append(ir.StringLit(a.value.evaluated_value))
            else:
                items.append(self.expr(a.value))
        return ir.Print(items=items)
