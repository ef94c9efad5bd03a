"""Numba's Optional results -> a value and a flag: a device function that returns None on some paths returns
(value, is not None); the caller's name is read only where a test says it is not None, as Numba raises where a
None is used (mixed into the function lowerer)."""

from __future__ import annotations

import libcst as cst

from ..ir import nodes as ir


class OptionalLowerer:
    """Needs, from the class it is mixed into: optionals (name -> flag local), unwrapped (names known not None),
    none_guards (names the statement being lowered uses whatever they hold), hoisted (statements it needs first),
    statement()."""

    def guarded_statement(self, stmt) -> list:
        """STMT, after `if b is None: return` for each Optional b it uses whatever b holds: Numba raises there,
        and a kernel's thread stops at an exception; from there on b is known not None."""
        held, self.none_guards = self.none_guards, []
        hoisted, self.hoisted = self.hoisted, []
        try:
            lowered = self.statement(stmt)
            guards = list(dict.fromkeys(self.none_guards))
            first = self.hoisted  # `minus(p, scaled(0.5, p))`: the inner call's tuple into locals, before the guards
        finally:
            self.none_guards, self.hoisted = held, hoisted
        checks = [ir.If(cond=ir.Unary("not", ir.Name(self.optionals[name])), body=[ir.Return()], orelse=[])
                  for name in guards]
        return first + checks + lowered

    def unwrapped_by(self, test, positive: bool = True) -> set:
        """The Optional names TEST, when it is true (or, POSITIVE false, when it is false), says are not None:
        `b is not None`, `b is not None and ...`; `b is None` (or `... or b is None`) when false."""
        optionals = self.optionals
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And if positive else cst.Or):
            return self.unwrapped_by(test.left, positive) | self.unwrapped_by(test.right, positive)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name) \
                and test.left.value in optionals:
            target = test.comparisons[0]
            wanted = cst.IsNot if positive else cst.Is
            if isinstance(target.operator, wanted) and isinstance(target.comparator, cst.Name) \
                    and target.comparator.value == "None":
                return {test.left.value}
        return set()

    def none_test(self, node):
        """`b is not None` / `b is None` of a name bound to an Optional result: its flag, or not it."""
        optionals = self.optionals
        if len(node.comparisons) != 1 or not isinstance(node.left, cst.Name) or node.left.value not in optionals:
            return None
        target = node.comparisons[0]
        if not (isinstance(target.comparator, cst.Name) and target.comparator.value == "None"
                and isinstance(target.operator, (cst.Is, cst.IsNot))):
            return None
        flag = ir.Name(optionals[node.left.value])
        return flag if isinstance(target.operator, cst.IsNot) else ir.Unary("not", flag)


def ends_in_jump(body) -> bool:
    """Whether BODY's last statement leaves it (return, continue, break): what follows runs only when the test
    that guarded BODY was false."""
    last = body.body[-1] if isinstance(body, cst.IndentedBlock) and body.body else body
    smalls = last.body if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else []
    return bool(smalls) and isinstance(smalls[-1], (cst.Return, cst.Continue, cst.Break))
