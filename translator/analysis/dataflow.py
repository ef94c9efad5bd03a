"""KernelIR statements -> reaching definitions and webs: which assignments of a name meet at a use.

Numba puts functions in SSA form and unifies the types that meet at a phi node, so
`x = 0` followed (unconditionally) by `x = a` gives two variables, while `x = 0` and
`x += a` in a loop give one float64. Webs reproduce exactly that.
"""

from __future__ import annotations

from ..ir import nodes as ir
from ..errors import Unsupported


UNDEFINED = -1  # pseudo-definition: the variable has no value on some path to this use


class Defs:
    """Numbered definitions: ("param", name) | ("assign", stmt) | ("for", stmt) | ("tuple", stmt, k)."""

    def __init__(self):
        self.sites: list[tuple] = []
        self.names: list[str] = []

    def add(self, name: str, site: tuple) -> int:
        self.sites.append(site)
        self.names.append(name)
        return len(self.sites) - 1


def _merge(*states):
    live = [s for s in states if s is not None]
    if not live:
        return None
    out = dict(live[0])
    for s in live[1:]:
        for k, v in s.items():
            out[k] = out.get(k, frozenset()) | v
    return out


def expr_children(e):
    for child in vars(e).values():
        if isinstance(child, ir.Expr):
            yield child
        elif isinstance(child, list):
            for c in child:
                if isinstance(c, ir.Expr):
                    yield c


def walk_expr(e):
    yield e
    for c in expr_children(e):
        yield from walk_expr(c)
    if isinstance(e, ir.Load):
        yield from _array_exprs(e.array)
    if isinstance(e, ir.ArrayRef):
        yield from _array_exprs(e.array)


def _array_exprs(arr):
    for s in arr.shape:
        if isinstance(s, ir.Expr):
            yield from walk_expr(s)
    if arr.offset is not None:
        yield from walk_expr(arr.offset)


def stmt_exprs(s):
    """The expressions a statement evaluates, in order."""
    if isinstance(s, ir.Assign):
        return [s.value]
    if isinstance(s, ir.Store):
        return [s.target, s.value]
    if isinstance(s, ir.If):
        return [s.cond]
    if isinstance(s, ir.While):
        return [s.cond]
    if isinstance(s, ir.ForRange):
        return [s.start, s.stop, s.step]
    if isinstance(s, ir.Return):
        return list(s.values)
    if isinstance(s, ir.ExprStmt):
        return [s.value]
    if isinstance(s, ir.Print):
        return list(s.items)
    if isinstance(s, ir.TupleCall):
        return [s.call]
    if isinstance(s, ir.ArrayBind):
        return [s.cond] if s.cond is not None else []
    if isinstance(s, ir.ArrayDecl):
        exprs = [x for x in s.array.shape if isinstance(x, ir.Expr)]
        return exprs + ([s.array.offset] if s.array.offset is not None else [])
    return []


class ReachingDefs:
    def __init__(self, fn: ir.Function, reporter):
        self.fn = fn
        self.reporter = reporter
        self.defs = Defs()
        self.loops: list[tuple[list, list]] = []  # (break states, continue states)

    def run(self) -> Defs:
        state = {}
        self._number(self.fn.body)
        for name in set(self.defs.names):
            state[name] = frozenset([UNDEFINED])
        for p in self.fn.params:
            if p.array is None:
                p.def_id = self.defs.add(p.name, ("param", p))
                state[p.name] = frozenset([p.def_id])
        self.block(self.fn.body, state)
        return self.defs

    def _number(self, body):
        for s in body:
            if isinstance(s, ir.Assign):
                s.def_id = self.defs.add(s.target.name, ("assign", s))
            elif isinstance(s, ir.ForRange):
                s.def_id = self.defs.add(s.target.name, ("for", s))
            elif isinstance(s, ir.TupleCall):
                s.def_ids = [self.defs.add(t.name, ("tuple", s, k)) for k, t in enumerate(s.targets)]
            for sub in _sub_blocks(s):
                self._number(sub)

    def uses(self, exprs, state):
        if state is None:
            return
        for e in exprs:
            for node in walk_expr(e):
                if isinstance(node, ir.Name):
                    reaching = state.get(node.name, frozenset())
                    node.maybe_undefined = UNDEFINED in reaching
                    node.defs = reaching - {UNDEFINED}

    def block(self, body, state):
        for s in body:
            state = self.statement(s, state)
        return state

    def statement(self, s, state):
        if state is None:
            return None  # unreachable code after return/break/continue: nothing reaches it
        if isinstance(s, ir.If):
            self.uses([s.cond], state)
            return _merge(self.block(s.body, dict(state)), self.block(s.orelse, dict(state)))
        if isinstance(s, ir.While):
            return self.loop(s, state, lambda st: self.uses([s.cond], st), None)
        if isinstance(s, ir.ForRange):
            self.uses([s.start, s.stop, s.step], state)
            return self.loop(s, state, None, s)
        self.uses(stmt_exprs(s), state)
        if isinstance(s, ir.Assign):
            state = dict(state)
            state[s.target.name] = frozenset([s.def_id])
        elif isinstance(s, ir.TupleCall):
            state = dict(state)
            for t, d in zip(s.targets, s.def_ids):
                state[t.name] = frozenset([d])
        elif isinstance(s, ir.Return):
            return None
        elif isinstance(s, ir.Break):
            self.loops[-1][0].append(state)
            return None
        elif isinstance(s, ir.Continue):
            self.loops[-1][1].append(state)
            return None
        return state

    def loop(self, s, entry, on_head, for_stmt):
        head = dict(entry)
        for _ in range(100):
            if on_head:
                on_head(head)
            self.loops.append(([], []))
            body_state = dict(head)
            if for_stmt is not None:
                body_state[for_stmt.target.name] = frozenset([for_stmt.def_id])
            end = self.block(s.body, body_state)
            breaks, continues = self.loops.pop()
            new_head = _merge(entry, end, *continues)
            if new_head == head:
                break
            head = new_head
        exit_state = head
        if for_stmt is not None:
            # after a loop that ran, the variable holds the last value: the for definition reaches
            exit_state = _merge(head, {for_stmt.target.name: frozenset([for_stmt.def_id])})
        return _merge(exit_state, *breaks)


def _sub_blocks(s):
    if isinstance(s, ir.If):
        return [s.body, s.orelse]
    if isinstance(s, (ir.While, ir.ForRange)):
        return [s.body]
    return []


def sub_blocks(s):
    return _sub_blocks(s)


def walk_statements(body):
    """Every statement of a body, nested ones included, in order."""
    for s in body:
        yield s
        for sub in _sub_blocks(s):
            yield from walk_statements(sub)


def walk_body(body):
    """Every expression node a body evaluates, nested statements included."""
    for s in walk_statements(body):
        for e in stmt_exprs(s):
            yield from walk_expr(e)


def defined_vars(body) -> set:
    """The C variables a body assigns (loop counters and tuple targets included)."""
    out = set()
    for s in walk_statements(body):
        if isinstance(s, (ir.Assign, ir.ForRange)):
            out.add(s.target.var)
        elif isinstance(s, ir.TupleCall):
            out.update(t.var for t in s.targets)
    return out


def webs(fn: ir.Function, defs: Defs, reporter) -> dict[int, int]:
    """Union definitions that reach a common use; returns def id -> web representative."""
    parent = list(range(len(defs.sites)))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def visit(body):
        for s in body:
            for e in stmt_exprs(s):
                for node in walk_expr(e):
                    if isinstance(node, ir.Name):
                        if not node.defs:
                            reporter.add_unsupported(Unsupported(
                                node.node or s.node, f"'{node.name}' used before assignment",
                                "no assignment of it reaches this use", f"assign {node.name} before using it"))
                            continue
                        first, *rest = sorted(node.defs)
                        for d in rest:
                            parent[find(d)] = find(first)
            for sub in _sub_blocks(s):
                visit(sub)

    visit(fn.body)
    return {d: find(d) for d in range(len(defs.sites))}
