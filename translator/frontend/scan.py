"""libcst function -> facts the lowering needs before it starts: how often names are bound, tuple returns."""

from __future__ import annotations

import libcst as cst

from .names import dotted


def find_nodes(node, predicate, *, enter=lambda n: True, first=False) -> list:
    """The nodes under NODE (itself included) that PREDICATE holds for, in source order. ENTER says whether to
    look inside a node (not inside a nested function, say); FIRST stops at the first one found."""
    found = []

    class V(cst.CSTVisitor):
        def on_visit(self, n) -> bool:
            if first and found:
                return False
            if predicate(n):
                found.append(n)
            return enter(n)

    node.visit(V())
    return found


def returns_tuple(fn: cst.FunctionDef) -> bool:
    return bool(find_nodes(fn, lambda n: isinstance(n, cst.Return) and isinstance(n.value, cst.Tuple), first=True))


def bound_names(small) -> list:
    """Names a simple statement binds (assignment targets, imports)."""
    out = []

    def add(t):
        if isinstance(t, cst.Name):
            out.append(t.value)
        elif isinstance(t, (cst.Tuple, cst.List)):
            for el in t.elements:
                add(el.value)

    if isinstance(small, cst.Assign):
        for t in small.targets:
            add(t.target)
    elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
        add(small.target)
    elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
        for alias in small.names:
            name = alias.asname.name if alias.asname else alias.name
            out.append((dotted(name) or "").split(".")[0])
    return [n for n in out if n]


def assignment_counts(fn: cst.FunctionDef) -> dict:
    """How often each name is bound in the function body (not in nested functions)."""
    counts: dict[str, int] = {}

    def bump(target):
        if isinstance(target, cst.Name):
            counts[target.value] = counts.get(target.value, 0) + 1
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                bump(el.value)

    class V(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            return node is fn

        def visit_Assign(self, node):
            for t in node.targets:
                bump(t.target)

        def visit_AnnAssign(self, node):
            if node.value is not None:  # `t: x.dtype = x[i]` binds t; a bare `t: float32` does not
                bump(node.target)

        def visit_AugAssign(self, node):
            bump(node.target)
            bump(node.target)  # an augmented assignment rebinds: never a single binding

        def visit_For(self, node):
            bump(node.target)
            bump(node.target)

    fn.visit(V())
    return counts


def random_state_params(fn: cst.FunctionDef) -> set:
    """Parameters the function hands to numba.cuda.random's draws as their states (first argument)."""
    params = {p.name.value for p in fn.params.params}
    found = set()

    class V(cst.CSTVisitor):
        def visit_Call(self, node):
            name = dotted(node.func) or ""
            if name.rsplit(".", 1)[-1].startswith(("xoroshiro128p_", "init_xoroshiro128p_state")) and node.args \
                    and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value in params:
                found.add(node.args[0].value.value)

    fn.body.visit(V())
    return found
