"""`match` statements -> the if/elif chain CPython's bytecode makes of them, which is what Numba compiles (mixed
into the function lowerer). Value and literal patterns (`case 0:`, `case Op.ADD:`), their alternatives
(`case 1 | 2:`), None/True/False, the wildcard `case _:` and guards (`case 3 if x > 0:`) compare the subject;
captures and structural patterns (sequences, mappings, classes) have no meaning for a kernel's numbers."""

from __future__ import annotations

import libcst as cst

from ..errors import Unsupported
from .scan import find_nodes


class MatchLowerer:
    """Needs, from the class it is mixed into: info, block(), stmt_If(), located_at()."""

    def stmt_Match(self, stmt: cst.Match) -> list:
        subject = stmt.subject
        if find_nodes(subject, lambda n: isinstance(n, cst.Call)):
            raise Unsupported(subject, "match on a call", "numba2cuda compares the subject once per case, which "
                              "would call it again", "assign it to a variable first and match the variable")
        orelse = None
        for case in reversed(stmt.cases):
            test = self._case_test(subject, case.pattern)
            if case.guard is not None and test is not None:
                guard = _parenthesised(case.guard)
                self.info.reporter.relocate([(case.guard, guard)])
                test = cst.BooleanOperation(_parenthesised(test), cst.And(), guard)
            elif case.guard is not None:
                test = case.guard
            if test is None:  # `case _:` takes whatever the cases above did not: the else of the chain
                orelse = cst.Else(body=case.body)
                continue
            orelse = cst.If(test=test, body=case.body, orelse=orelse)
            self.located_at(case.pattern, [orelse])  # the if and its comparisons: at the case's pattern
        if orelse is None:
            return []
        return self.block(orelse.body) if isinstance(orelse, cst.Else) else self.stmt_If(orelse)

    def _case_test(self, subject, pattern):
        """The test CPython makes of PATTERN, as an expression of SUBJECT; None for the wildcard."""
        if isinstance(pattern, cst.MatchAs) and pattern.pattern is None and pattern.name is None:
            return None
        if isinstance(pattern, cst.MatchValue):
            return cst.Comparison(subject, [cst.ComparisonTarget(cst.Equal(), pattern.value)])
        if isinstance(pattern, cst.MatchSingleton):
            return cst.Comparison(subject, [cst.ComparisonTarget(cst.Is(), pattern.value)])
        if isinstance(pattern, cst.MatchOr):
            tests = [self._case_test(subject, p.pattern) for p in pattern.patterns]
            if any(t is None for t in tests):
                return None
            test = tests[0]
            for t in tests[1:]:
                test = cst.BooleanOperation(test, cst.Or(), t)
            return test
        if isinstance(pattern, cst.MatchAs):
            raise Unsupported(pattern, "capture pattern in a match", "numba2cuda translates value patterns "
                              "(case 0:, case Op.ADD:, case 1 | 2:) and case _", "use the subject itself in the "
                              "case's body instead of a new name")
        raise Unsupported(pattern, "structural pattern in a match", "a kernel's values are numbers: numba2cuda "
                          "translates value patterns (case 0:, case Op.ADD:, case 1 | 2:) and case _",
                          "compare the values with if/elif")


def _parenthesised(expr):
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if not expr.lpar else expr
