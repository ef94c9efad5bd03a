"""libcst function -> the same function with each web of one name's bindings named apart (Numba's SSA at source
level).

Numba renames every assignment of a variable into an SSA version and types the versions apart, unifying only
those that meet at a join the variable is live across. So `R = camera_rotation; R0 = R[0, :]` early in a kernel and
`R, G, B = sample(...)` later are two variables to Numba, an array and a number. The lowering gives a name one
kind; where it refuses a rebinding, the name's webs (the definitions that reach a common use, joined through
loops and branches) get names of their own, `R` and `R_2`, and the function is lowered again. A web is a
variable Numba would type as one (its phi nodes join exactly these definitions), so renaming cannot split a
value the program carries from one binding to another use.
"""

from __future__ import annotations

import libcst as cst

_SCOPES = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.NamedExpr, cst.FunctionDef,
           cst.ClassDef, cst.Try, cst.Global, cst.Nonlocal, cst.Del, cst.Match)


class _Unsafe(Exception):
    """The name is bound or read where this flow does not follow it (a lambda, try, nested def): left as is."""


def _join(*states):
    live = [s for s in states if s is not None]
    return frozenset().union(*live) if live else None


class _Flow:
    """Reaching definitions of one name over a function's structured control flow."""

    def __init__(self, name: str):
        self.name = name
        self.reach: dict = {}  # use (a Name node) -> the definitions (Name nodes) that reach it
        self.defs: list = []
        self.loops: list = []  # (breaks, continues): the states at each, per enclosing loop

    def names(self, node) -> list:
        """NAME's reads in an expression (not an attribute `.NAME` nor a keyword `NAME=`)."""
        found, skip = [], set()

        class V(cst.CSTVisitor):
            def on_visit(v, n) -> bool:
                if isinstance(n, _SCOPES) and _mentions(n, self.name):
                    raise _Unsafe
                if isinstance(n, cst.Attribute):
                    skip.add(id(n.attr))
                elif isinstance(n, cst.Arg) and n.keyword is not None:
                    skip.add(id(n.keyword))
                elif isinstance(n, cst.Name) and n.value == self.name and id(n) not in skip:
                    found.append(n)
                return True

        node.visit(V())
        return found

    def use(self, node, state) -> None:
        for n in self.names(node):
            self.reach.setdefault(n, set()).update(state or ())

    def define(self, target, state):
        if state is None:
            return None
        if isinstance(target, cst.Name):
            if target.value != self.name:
                return state
            if target not in self.defs:
                self.defs.append(target)
            return frozenset([target])
        if isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                if isinstance(el, cst.StarredElement):
                    if _mentions(el, self.name):
                        raise _Unsafe
                    continue
                state = self.define(el.value, state)
            return state
        self.use(target, state)  # `a[NAME] = ...`, `NAME.x = ...`: read
        return state

    def block(self, statements, state):
        for s in statements:
            state = self.statement(s, state)
        return state

    def statement(self, s, state):
        if isinstance(s, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return self.block(s.body, state)
        if isinstance(s, cst.If):
            self.use(s.test, state)
            then = self.block(s.body.body, state)
            if s.orelse is None:
                return _join(then, state)
            other = self.statement(s.orelse, state) if isinstance(s.orelse, cst.If) else \
                self.block(s.orelse.body.body, state)
            return _join(then, other)
        if isinstance(s, cst.For):
            self.use(s.iter, state)
            return self.loop(None, lambda head: self.block(s.body.body, self.define(s.target, head)), s.orelse,
                             state)
        if isinstance(s, cst.While):
            return self.loop(s.test, lambda head: self.block(s.body.body, head), s.orelse, state)
        if isinstance(s, cst.With):
            for item in s.items:
                self.use(item.item, state)
                if item.asname is not None:
                    state = self.define(item.asname.name, state)
            return self.block(s.body.body, state)
        return self.small(s, state)

    def loop(self, test, body, orelse, state):
        breaks, continues = [], []
        self.loops.append((breaks, continues))
        head = state
        while True:  # the definitions a back edge carries grow until they reach the head unchanged
            breaks.clear()
            continues.clear()
            if test is not None:
                self.use(test, head)
            wider = _join(state, body(head), *continues)
            if wider == head:
                break
            head = wider
        self.loops.pop()
        after = self.block(orelse.body.body, head) if orelse is not None else head
        return _join(after, *breaks)

    def small(self, s, state):
        if isinstance(s, cst.Assign):
            self.use(s.value, state)
            for t in s.targets:
                state = self.define(t.target, state)
            return state
        if isinstance(s, cst.AnnAssign):
            if s.value is None:
                return state
            self.use(s.value, state)
            return self.define(s.target, state)
        if isinstance(s, cst.AugAssign):
            self.use(s.value, state)
            if isinstance(s.target, cst.Name) and s.target.value == self.name:
                # `x += y` reads x and binds it: one node, a use and a definition, so they share a web
                self.reach.setdefault(s.target, set()).update(state or ())
                return self.define(s.target, state)
            self.use(s.target, state)
            return state
        if isinstance(s, (cst.Break, cst.Continue)):
            if self.loops and state is not None:
                self.loops[-1][0 if isinstance(s, cst.Break) else 1].append(state)
            return None
        if isinstance(s, (cst.Return, cst.Raise)):
            self.use(s, state)
            return None
        if isinstance(s, _SCOPES) and _mentions(s, self.name):
            raise _Unsafe
        if isinstance(s, (cst.Expr, cst.Assert)):
            self.use(s, state)
        return state


def _mentions(node, name: str) -> bool:
    return bool(_all_names(node, name))


def webs(fn: cst.FunctionDef, name: str) -> list | None:
    """The webs of NAME's bindings in FN, in source order, each the list of its Name nodes (definitions and
    uses); None where NAME is bound or read inside a construct the flow does not follow."""
    flow = _Flow(name)
    params = [p.name for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)
              if p.name.value == name]
    try:
        flow.block(fn.body.body, frozenset(params))
    except _Unsafe:
        return None
    parent: dict = {}

    def root(n):
        while parent.get(n, n) is not n:
            n = parent[n]
        return n

    for use, defs in flow.reach.items():
        for d in defs:
            parent[root(d)] = root(use)
    order = [n for n in _all_names(fn, name)]
    groups: dict = {}
    for n in order:
        if n in flow.reach or n in flow.defs or n in params:
            groups.setdefault(root(n), []).append(n)
    return list(groups.values())


def _all_names(node, name: str) -> list:
    found = []

    class V(cst.CSTVisitor):
        def visit_Name(self, n) -> None:
            if n.value == name:
                found.append(n)

    node.visit(V())
    return found


def split_webs(fn: cst.FunctionDef, name: str, taken: set) -> tuple | None:
    """FN with every web of NAME but one renamed (NAME_2, NAME_3 ..., none of TAKEN); the web of a parameter,
    else the first, keeps the name. Returns (new function, the new names), or None where NAME has one web or
    its flow is not followed."""
    found = webs(fn, name)
    if not found or len(found) < 2:
        return None
    params = {p.name for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
    kept = next((w for w in found if any(n in params for n in w)), found[0])
    renames, fresh, k = {}, [], 2
    for web in found:
        if web is kept:
            continue
        while f"{name}_{k}" in taken:
            k += 1
        new = f"{name}_{k}"
        taken.add(new)
        fresh.append(new)
        renames.update((n, new) for n in web)

    class Rename(cst.CSTTransformer):
        def leave_Name(self, original, updated):
            return updated.with_changes(value=renames[original]) if original in renames else updated

    return fn.visit(Rename()), fresh


def parallel_nodes(old, new):
    """(old node, its copy) for every node of two trees of the same shape (a tree and its renamed copy)."""
    stack = [(old, new)]
    while stack:
        a, b = stack.pop()
        yield a, b
        stack.extend(zip(a.children, b.children))
