"""typed KernelIR -> lower bounds of integer expressions, so `a[i]` and `i // n` stay plain C when i >= 0.

Numba wraps negative indices around (a[-1] is the last element) and floors integer
division toward minus infinity. Where an index or a dividend is provably non-negative
(thread indices, shapes, range counters, guarded values) plain C gives the same result.
Integer kernel parameters count as non-negative when that is assumed; the launcher
checks the assumption, so it is never silently wrong.
"""

from __future__ import annotations

from contextlib import contextmanager

from ..ir import nodes as ir
from ..ir import typesys as T
from .dataflow import defined_vars, sub_blocks

INF = float("inf")
NONNEG_BUILTINS = ("threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize")
NONNEG_CALLS = {"cuda.laneid", "cuda.popc", "cuda.clz", "cuda.ffs", "cuda.brev", "cuda.ballot_sync",
                "cuda.activemask", "cuda.syncthreads_count", "cuda.lanemask_lt"}


def _tighter(new, old) -> bool:
    """Is lower bound `new` more informative than `old` (None: nothing known)?"""
    return new is not None and (old is None or new > old)


def _ends_in_exit(body) -> bool:
    return bool(body) and isinstance(body[-1], (ir.Return, ir.Break, ir.Continue))


class Bounds:
    def __init__(self, fn: ir.Function, assume_nonnegative: bool):
        self.fn = fn
        self.assume = assume_nonnegative and fn.is_kernel
        self.assumed: set = set()
        self.facts: list[dict] = [{}]
        self.var_lb: dict = {}
        self._solve_variables()

    # ------------------------------------------------------------ variables
    def _solve_variables(self):
        defs: dict = {}
        self._collect_defs(self.fn.body, defs)
        for p in self.fn.params:
            var = getattr(p, "variable", None)
            if var is not None and isinstance(p.type, T.Scalar):
                site = ("param", p)
                defs.setdefault(var, []).append(site)
        for var in defs:
            self.var_lb[var] = (INF, frozenset())
        for _ in range(8):
            changed = False
            for var, sites in defs.items():
                lo, deps = INF, frozenset()
                for site in sites:
                    slo, sdeps = self._site_bound(var, site)
                    if slo is None:
                        lo = None
                        break
                    lo, deps = min(lo, slo), deps | sdeps
                new = (lo, deps)
                if new != self.var_lb[var]:
                    self.var_lb[var] = new
                    changed = True
            if not changed:
                break
        else:
            for var in defs:  # did not settle (e.g. i -= 1 in a loop): unknown
                if self.var_lb[var][0] is not None and self.var_lb[var][0] != INF:
                    self.var_lb[var] = (None, frozenset())
        for var, (lo, _) in list(self.var_lb.items()):
            if lo == INF:
                self.var_lb[var] = (None, frozenset())

    def _collect_defs(self, body, defs):
        for s in body:
            if isinstance(s, ir.Assign):
                defs.setdefault(s.target.var, []).append(("assign", s))
            elif isinstance(s, ir.ForRange):
                defs.setdefault(s.target.var, []).append(("for", s))
            elif isinstance(s, ir.TupleCall):
                for t in s.targets:
                    defs.setdefault(t.var, []).append(("unknown", s))
            for sub in sub_blocks(s):
                self._collect_defs(sub, defs)

    def _site_bound(self, var, site):
        t = var.type
        if not isinstance(t, T.Scalar) or t.is_float or t.is_complex:
            return None, frozenset()
        if t.kind in "ub":
            return 0, frozenset()
        kind, s = site
        if kind == "param":
            if not self.fn.is_kernel:
                # a device function's integer parameter is as small as the smallest argument any call passes
                lo = getattr(self.fn, "param_lbs", {}).get(s.name)
                return (lo, frozenset()) if lo is not None else (None, frozenset())
            return (0, frozenset([s.name])) if self.assume else (None, frozenset())
        if kind == "assign":
            return self.lb(s.value)
        if kind == "for":
            if self.at_least(s.step, 1):
                return self.lb(s.start)
            if isinstance(s.step, ir.Const) and s.step.value < 0:
                lo, deps = self.lb(s.stop)
                return (None if lo is None else lo + 1), deps
        return None, frozenset()

    # ------------------------------------------------------------ expressions
    def lb(self, e):
        """(lowest possible value or None, parameters assumed non-negative to get it)."""
        t = e.type
        if isinstance(t, T.Scalar) and t.kind in "ub":
            return 0, frozenset()
        if not isinstance(t, T.Scalar) or t.is_float or t.is_complex:
            return None, frozenset()
        method = getattr(self, "lb_" + type(e).__name__, None)
        return method(e) if method else (None, frozenset())

    def lb_Const(self, e):
        return e.value, frozenset()

    def lb_Builtin(self, e):
        head = e.text.split(".")[0]
        if head in ("blockDim", "gridDim"):
            return 1, frozenset()
        if head == "warpSize":
            return 32, frozenset()
        return (0, frozenset()) if head in NONNEG_BUILTINS else (None, frozenset())

    def lb_ShapeOf(self, e):
        return 0, frozenset()

    lb_PitchOf = lb_ShapeOf

    def lb_Name(self, e):
        lo, deps = self.var_lb.get(e.var, (None, frozenset()))
        for frame in reversed(self.facts):
            if e.var in frame:
                flo, fdeps = frame[e.var]
                if flo is not None and (lo is None or flo > lo):
                    lo, deps = flo, fdeps
        return lo, deps

    def lb_Cast(self, e):
        if e.value.type.is_int or e.value.type.kind == "b":
            return self.lb(e.value)
        return None, frozenset()

    def lb_IfExp(self, e):
        return self._combine(min, self.lb(e.then), self.lb(e.orelse))

    def lb_Call(self, e):
        key = e.intrinsic.key
        if key in NONNEG_CALLS:
            return 0, frozenset()
        if key in ("n2c::mod", "n2c::floordiv") and len(e.args) == 2:
            a, b = self.lb(e.args[0]), self.lb(e.args[1])
            if b[0] is not None and b[0] >= 1 and (key == "n2c::mod" or self._nonneg(a)):
                return 0, b[1] | (a[1] if key == "n2c::floordiv" else frozenset())
        if key in ("min", "max"):
            a, b = self.lb(e.args[0]), self.lb(e.args[1])
            if key == "min":
                return self._combine(min, a, b)
            known = [x for x in (a, b) if x[0] is not None]
            return max(known, key=lambda x: x[0]) if known else (None, frozenset())
        return None, frozenset()

    def lb_BinOp(self, e):
        a, b = self.lb(e.left), self.lb(e.right)
        op = e.op
        if op == "+":
            return self._combine(lambda x, y: x + y, a, b)
        if op == "-" and isinstance(e.right, ir.Const):
            return (None if a[0] is None else a[0] - e.right.value), a[1]
        if op == "*" and self._nonneg(a) and self._nonneg(b):
            return self._combine(lambda x, y: x * y if x != INF and y != INF else INF, a, b)
        if op in ("//", "/", "%") and self._nonneg(a) and b[0] is not None and b[0] >= 1:
            return 0, a[1] | b[1]
        if op == "%" and b[0] is not None and b[0] >= 1:
            return 0, b[1]  # Python's modulo takes the divisor's sign
        if op in (">>", "<<", "|", "^", "**") and self._nonneg(a) and (op in (">>", "<<", "**") or self._nonneg(b)):
            return 0, a[1] | (b[1] if op in ("|", "^") else frozenset())
        if op == "&":
            if self._nonneg(a) or self._nonneg(b):
                return 0, a[1] if self._nonneg(a) else b[1]
        return None, frozenset()

    @staticmethod
    def _nonneg(x):
        return x[0] is not None and x[0] >= 0

    @staticmethod
    def _combine(f, a, b):
        if a[0] is None or b[0] is None:
            return None, frozenset()
        return f(a[0], b[0]), a[1] | b[1]

    def at_least(self, e, k) -> bool:
        lo, deps = self.lb(e)
        if lo is not None and lo >= k:
            self.assumed |= deps
            return True
        return False

    # ------------------------------------------------------------ guards
    def facts_of(self, cond, negate=False) -> dict:
        out: dict = {}
        if isinstance(cond, ir.Unary) and cond.op == "not":
            return self.facts_of(cond.operand, not negate)
        if isinstance(cond, ir.BoolOp) and (cond.op == "and") != negate:
            for v in cond.values:
                for var, fact in self.facts_of(v, negate).items():
                    if var not in out or _tighter(fact[0], out[var][0]):
                        out[var] = fact
            return out
        if not isinstance(cond, ir.Compare):
            return out
        op = cond.op
        if negate:
            op = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}[op]
        for var_side, other, strict_ops, loose_ops in ((cond.left, cond.right, (">",), (">=", "==")),
                                                      (cond.right, cond.left, ("<",), ("<=", "=="))):
            if isinstance(var_side, ir.Name) and var_side.type.is_int and op in strict_ops + loose_ops:
                lo, deps = self.lb(other)
                if lo is not None:
                    out[var_side.var] = (lo + (1 if op in strict_ops else 0), deps)
        return out

    @contextmanager
    def guard(self, cond, region, negate=False):
        redefined = defined_vars(region)
        self.facts.append({v: f for v, f in self.facts_of(cond, negate).items() if v not in redefined})
        try:
            yield
        finally:
            self.facts.pop()

    def enter_block(self, body):
        self.facts.append({})

    def leave_block(self):
        self.facts.pop()

    def after_statement(self, body, i):
        """`if i >= n: return` tells the rest of the block that i < n (and so on for the negation)."""
        s = body[i]
        if isinstance(s, ir.If) and not s.orelse and _ends_in_exit(s.body):
            redefined = defined_vars(body[i + 1:])
            for var, fact in self.facts_of(s.cond, negate=True).items():
                if var not in redefined:
                    self.facts[-1][var] = fact
