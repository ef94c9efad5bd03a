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



class NameReads(cst.CSTVisitor):
    """Visits the names an expression reads: not the attribute of `cuda.threadIdx.x` (no variable x), nor the
    name of a keyword argument."""

    def visit_Attribute(self, node) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node) -> bool:
        node.value.visit(self)
        return False


def straight_line_names(fn: cst.FunctionDef, counts: dict) -> dict:
    """name -> the block whose own statements bind it, where every binding of the name is a statement of that one
    block, no loop holds the block, and the name is not used after the block: each binding then happens once, in
    the order written, and may simply take the name over from there on (a parameter rebound to a local array, or
    to a view of itself under the kernel's bounds check, which reads the parameter before the block). COUNTS:
    assignment_counts(fn)."""
    direct: dict[str, list] = {}  # name -> [(block, in a loop)] per binding statement
    uses: dict[str, list] = {}  # name -> the order of each use
    spans: dict[int, tuple] = {}  # id(block) -> (first, last) order of the uses inside it

    class Walk(NameReads):
        def __init__(self):
            self.loops = 0
            self.order = 0
            self.open: dict = {}

        def visit_FunctionDef(self, node):
            return node is fn

        def visit_For(self, node):
            self.loops += 1

        def leave_For(self, node):
            self.loops -= 1

        def visit_While(self, node):
            self.loops += 1

        def leave_While(self, node):
            self.loops -= 1

        def visit_IndentedBlock(self, node):
            self.open[id(node)] = self.order
            for stmt in node.body:
                for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                    for name in bound_names(small):
                        direct.setdefault(name, []).append((node, self.loops > 0))

        def leave_IndentedBlock(self, node):
            spans[id(node)] = (self.open.pop(id(node)), self.order)

        def visit_Name(self, node):
            self.order += 1
            uses.setdefault(node.value, []).append(self.order)

    fn.visit(Walk())
    out = {}
    for name, found in direct.items():
        block = found[0][0]
        if len(found) != counts.get(name) or any(b is not block or looped for b, looped in found):
            continue
        first, last = spans[id(block)]
        if all(u <= last for u in uses.get(name, [])):  # used before the block or in it, never after it
            out[name] = block
    return out


def returns_of(fn: cst.FunctionDef) -> list:
    """FN's own return statements (not those of a function defined inside it)."""
    return find_nodes(fn.body, lambda n: isinstance(n, cst.Return),
                      enter=lambda n: not isinstance(n, (cst.FunctionDef, cst.Lambda)))


def returns_a_value(fn: cst.FunctionDef) -> bool:
    """Whether a `return` of FN gives a value (`return None` does not)."""
    return any(r.value is not None and not (isinstance(r.value, cst.Name) and r.value.value == "None")
               for r in returns_of(fn))


def is_docstring(stmt) -> bool:
    """Whether STMT is a string on a line of its own (a docstring, or a comment written as one)."""
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr) \
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def returned_view(fn: cst.FunctionDef) -> cst.Subscript | None:
    """E of a function whose body is `return E` alone (a docstring aside), E a subscript of a parameter whose
    indices read parameters and literals only: `return a[:, 0]` (an overload's implementation), `return m[i]`."""
    body = [s for s in fn.body.body if not is_docstring(s)] if isinstance(fn.body, cst.IndentedBlock) else [fn.body]
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return None
    ret = body[0].body[0]
    if not isinstance(ret, cst.Return) or not isinstance(ret.value, cst.Subscript):
        return None
    params = {p.name.value for p in fn.params.params}

    def plain(e) -> bool:
        if isinstance(e, cst.Name):
            return e.value in params
        if isinstance(e, cst.Integer):
            return True
        if isinstance(e, cst.UnaryOperation):
            return plain(e.expression)
        if isinstance(e, cst.BinaryOperation):
            return plain(e.left) and plain(e.right)
        return False

    def bound(b) -> bool:
        return b is None or plain(b)

    view = ret.value
    if not (isinstance(view.value, cst.Name) and view.value.value in params):
        return None
    for el in view.slice:
        s = el.slice
        if not (isinstance(s, cst.Index) and plain(s.value) or
                isinstance(s, cst.Slice) and bound(s.lower) and bound(s.upper) and bound(s.step)):
            return None
    return view


def returned_params(fn: cst.FunctionDef, functions=None, depth: int = 0) -> tuple | None:
    """The parameters every `return` with a value gives back: (color,) for `return color`, (afp, bfp) for
    `return afp, bfp` (an MRI simulator's output arrays), if the returns agree; else None. With FUNCTIONS (name ->
    FunctionInfo), `return g(state, buf, n)` gives back what g gives back of the arguments passed to it."""
    params = [p.name.value for p in fn.params.params]
    spelt = set()
    for r in returns_of(fn):
        if r.value is None:
            continue
        if isinstance(r.value, cst.Call) and isinstance(r.value.func, cst.Name) and functions and depth < 8 \
                and r.value.func.value in functions:
            callee = functions[r.value.func.value]
            inner = returned_params(callee.node, functions, depth + 1)
            args = [a.value for a in r.value.args if a.keyword is None and not a.star]
            cparams = [p.name.value for p in callee.node.params.params]
            if inner is None or any(p not in cparams or cparams.index(p) >= len(args) for p in inner):
                return None
            items = [args[cparams.index(p)] for p in inner]
            tupled = returns_tuple(callee.node)
        else:
            items = [el.value for el in r.value.elements] if isinstance(r.value, cst.Tuple) else [r.value]
            tupled = isinstance(r.value, cst.Tuple)
        if not all(isinstance(v, cst.Name) and v.value in params for v in items):
            return None
        spelt.add((tupled, tuple(v.value for v in items)))
    return spelt.pop()[1] if len(spelt) == 1 else None


def names_bound_anywhere(module: cst.Module) -> set:
    """Every name the module binds in any scope: imports, definitions, parameters, assignment and loop targets."""
    bound: set = set()
    target_of = {cst.AssignTarget: "target", cst.AnnAssign: "target", cst.AugAssign: "target", cst.For: "target",
                 cst.CompFor: "target", cst.NamedExpr: "target", cst.AsName: "name"}

    class Binds(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            if isinstance(node, cst.Import):
                bound.update(a.asname.name.value if a.asname else cst.Module([]).code_for_node(a.name).split(".")[0]
                             for a in node.names)
            elif isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
                bound.update(a.asname.name.value if a.asname else a.name.value for a in node.names)
            elif isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Param)):
                bound.add(node.name.value)
            elif isinstance(node, cst.Global):
                bound.update(item.name.value for item in node.names)
            elif type(node) in target_of:  # the names a target binds, not those of a[i] or x.y it stores into
                bound.update(n.value for n in find_nodes(getattr(node, target_of[type(node)]),
                                                         lambda x: isinstance(x, cst.Name),
                                                         enter=lambda x: not isinstance(x, (cst.Attribute,
                                                                                            cst.Subscript))))
            return True

    module.visit(Binds())
    return bound


def returns_optional(fn: cst.FunctionDef) -> bool:
    """Whether FN returns None on some paths and a value on others: Numba types its result an Optional. A path
    that runs off the end returns None too (a search whose only `return` is in its loop)."""
    returns = returns_of(fn)
    none = [r for r in returns if r.value is None or isinstance(r.value, cst.Name) and r.value.value == "None"]
    falls_off = bool(returns) and isinstance(fn.body, cst.IndentedBlock) and not always_leaves(fn.body.body)
    return (bool(none) or falls_off) and len(none) < len(returns) and \
        not any(isinstance(r.value, cst.Tuple) for r in returns)


def always_leaves(stmts) -> bool:
    """Whether running STMTS always ends in a return or a raise, never reaching what follows them (read as
    Numba's control flow does: a loop may run no iteration, and only `while True:` without a break never ends)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(small, (cst.Return, cst.Raise)) for small in last.body)
    if isinstance(last, cst.If):
        other = [last.orelse] if isinstance(last.orelse, cst.If) else \
            last.orelse.body.body if last.orelse is not None else []
        return always_leaves(last.body.body) and always_leaves(other)
    if isinstance(last, cst.While):
        forever = isinstance(last.test, cst.Name) and last.test.value == "True" or \
            isinstance(last.test, cst.Integer) and last.test.value != "0"
        return forever and not find_nodes(last.body, lambda n: isinstance(n, cst.Break),
                                          enter=lambda n: not isinstance(n, (cst.For, cst.While, cst.FunctionDef)))
    if isinstance(last, cst.With):
        return always_leaves(last.body.body)
    return False


def self_rebindings(fn: cst.FunctionDef, returned_positions) -> dict:
    """`M = vmuls(M, PD)`, `afp, bfp = freeprecess(afp, bfp, ...)` of a device function that returns the arrays it
    was given: each name is bound again to what it holds, which is no new binding. Name -> how many such
    statements FN has; RETURNED_POSITIONS(call) is the positions of the parameters the called function returns
    ((k,) for `return a`, (j, k) for `return a, b`), or None."""
    out: dict = {}
    for node in find_nodes(fn, lambda n: isinstance(n, cst.Assign) and len(n.targets) == 1
                           and isinstance(n.value, cst.Call)):
        target, call = node.targets[0].target, node.value
        names = [target] if isinstance(target, cst.Name) else [el.value for el in target.elements] \
            if isinstance(target, cst.Tuple) else []
        positions = returned_positions(call)
        args = [a.value for a in call.args if a.keyword is None and not a.star]
        if positions is None or len(positions) != len(names) or (len(names) > 1) != isinstance(target, cst.Tuple):
            continue
        for name, k in zip(names, positions):
            if isinstance(name, cst.Name) and k < len(args) and isinstance(args[k], cst.Name) \
                    and args[k].value == name.value:
                out[name.value] = out.get(name.value, 0) + 1
    return out


def declared_arrays(fn: cst.FunctionDef) -> set:
    """Names FN binds to an array it makes (`state = cuda.local.array(25, uint64)`, `s = cuda.shared.array(...)`,
    `c = cuda.const.array_like(T)`), as written."""
    return {node.targets[0].target.value for node in find_nodes(
        fn, lambda n: isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name)
        and isinstance(n.value, cst.Call) and isinstance(n.value.func, cst.Attribute)
        and n.value.func.attr.value in ("array", "array_like"))}


def block_local_names(fn: cst.FunctionDef) -> set:
    """Names every read of which follows a binding of the name among the earlier statements of the read's own block,
    with no binding in a nested block between (`acc = clusters(...)`, then `-acc * dx` in one branch; `acc =
    boids(...)`, then `acc[0]` in another): no binding's value outlives its block, so one binding may hold a number
    and another a tuple, as Numba's SSA lets them where they never meet."""
    bound_somewhere, uncovered = set(), set()

    class Reads(NameReads):
        def __init__(self):
            self.names = []

        def visit_Name(self, node):
            self.names.append(node.value)

        def visit_FunctionDef(self, node):
            return False

        def visit_Lambda(self, node):
            return False

    def read(node, bound):
        r = Reads()
        node.visit(r)
        uncovered.update(n for n in r.names if n not in bound)

    def walk(statements, bound) -> set:
        """Reads checked against BOUND (the names this block bound so far); returns every name bound inside."""
        inside = set()
        for stmt in statements:
            nested = set()
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign):
                        read(small.value, bound)
                        for t in small.targets:
                            if not isinstance(t.target, (cst.Name, cst.Tuple, cst.List)):
                                read(t.target, bound)
                    elif not isinstance(small, (cst.Import, cst.ImportFrom)):
                        read(small, bound)
                    names = set(bound_names(small))
                    bound |= names
                    inside |= names
            elif isinstance(stmt, cst.If):
                read(stmt.test, bound)
                nested |= walk(stmt.body.body, set())
                if isinstance(stmt.orelse, cst.If):
                    nested |= walk([stmt.orelse], set(bound))  # elif: its test is read where the if is
                elif isinstance(stmt.orelse, cst.Else):
                    nested |= walk(stmt.orelse.body.body, set())
            elif isinstance(stmt, (cst.For, cst.While)):
                read(stmt.iter if isinstance(stmt, cst.For) else stmt.test, bound)
                targets = set()
                if isinstance(stmt, cst.For):
                    targets = set(bound_names(cst.Assign(targets=[cst.AssignTarget(stmt.target)], value=stmt.iter)))
                nested |= targets | walk(stmt.body.body, set(targets))
                if stmt.orelse is not None:
                    nested |= walk(stmt.orelse.body.body, set())
            elif isinstance(stmt, cst.FunctionDef):
                bound.add(stmt.name.value)
            else:  # with, try, match: read as a whole
                read(stmt, bound)
            bound -= nested  # a value bound in a nested block may reach what follows: read it only after a rebinding
            inside |= nested
        return inside

    if isinstance(fn.body, cst.IndentedBlock):
        bound_somewhere = walk(fn.body.body, {p.name.value for p in fn.params.params})
    return bound_somewhere - uncovered
