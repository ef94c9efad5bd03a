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
        self.web_of: dict[int, int] = {}  # def id -> its web's representative, set by ReachingDefs.run

    def add(self, name: str, site: tuple) -> int:
        self.sites.append(site)
        self.names.append(name)
        return len(self.sites) - 1


def expr_children(e):
    for child in vars(e).values():
        if isinstance(child, ir.Expr):
            yield child
        elif isinstance(child, list):
            for c in child:
                if isinstance(c, ir.Expr):
                    yield c


def walk_expr(e):
    """Every node of an expression, parents first, an array's shape and view offset after its indices.
    Iterative: nested generators would cost time quadratic in the depth of a long chain (a + b + c + ...)."""
    stack = [e]
    while stack:
        node = stack.pop()
        yield node
        after = list(expr_children(node))
        if isinstance(node, (ir.Load, ir.ArrayRef)):
            after += _array_exprs(node.array)
        stack.extend(reversed(after))


def _array_exprs(arr) -> list:
    """An array's shape and offset expressions, and those of the unnamed views it is made from (`a[i][1:3]`
    passed in place is a view of a view: both computed where it is used)."""
    out = []
    while True:
        out += arr.exprs()
        base = arr.base
        if base is None or base.kind != "view" or base.name:
            return out
        arr = base


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
    if isinstance(s, ir.ArrayBind):  # a source that is a view made in place (`x = a[j]` in a loop) computes here
        return ([s.cond] if s.cond is not None else []) + [
            x for src in (s.source, s.orelse) if src is not None and src.kind == "view" and not src.name
            for x in _array_exprs(src)]
    if isinstance(s, ir.ArrayDecl):  # `w = out[t, 1:]` computes the row out[t] it slices here too
        return _array_exprs(s.array)
    return []


class Phi:
    """Where paths with different definitions of a name meet (an if's end, a loop's head or exit)."""

    __slots__ = ("operands", "key")

    def __init__(self, operands):
        self.operands = list(operands)
        self.key = -1  # its element in the union-find, once numbered


NOTHING = -2  # a name no statement assigns: no definition reaches it, and it is not "maybe undefined" either


class ReachingDefs:
    """Numba's SSA in one pass over the structured body: a name's value at each point is a definition, UNDEFINED
    or a Phi of the values that meet there (built as Braun et al. build SSA: a loop's head gets a Phi for every
    name the loop assigns before its body is read, and the body's end and continues fill it in). A use's
    reaching definitions are the definitions its value reaches through Phis; webs unite those of each use.

    Linear in the body: no state is copied at a branch (an if records the names it changes and undoes them),
    and no loop is iterated to a fixed point, which cost time exponential in the nesting of loops."""

    def __init__(self, fn: ir.Function, reporter):
        self.fn = fn
        self.reporter = reporter
        self.defs = Defs()
        self.state: dict = {}  # name -> def id | UNDEFINED | Phi, at the statement being read
        self.changes: list[dict] = []  # per open branch: name -> its value before the branch changed it
        self.loops: list[tuple[set, list, list]] = []  # (names assigned, break values, continue values)
        self.live = True  # False after return/break/continue: nothing reaches the following statements
        self.uses_seen: list = []  # (Name node, its value)
        self.assigned_in: dict = {}  # id(loop) -> names its body assigns

    def run(self) -> Defs:
        self._number(self.fn.body)
        for name in set(self.defs.names):
            self.state[name] = UNDEFINED
        for p in self.fn.params:
            if p.array is None:
                p.def_id = self.defs.add(p.name, ("param", p))
                self.state[p.name] = p.def_id
        self.block(self.fn.body)
        self._resolve()
        return self.defs

    def _number(self, body):
        for s in walk_statements(body):
            if isinstance(s, ir.Assign):
                s.def_id = self.defs.add(s.target.name, ("assign", s))
            elif isinstance(s, ir.ForRange):
                s.def_id = self.defs.add(s.target.name, ("for", s))
            elif isinstance(s, ir.TupleCall):
                s.def_ids = [self.defs.add(t.name, ("tuple", s, k)) for k, t in enumerate(s.targets)]

    # ------------------------------------------------------------ the walk
    def set(self, name, value) -> None:
        if self.changes and name not in self.changes[-1]:
            self.changes[-1][name] = self.state.get(name, NOTHING)
        self.state[name] = value

    def uses(self, exprs):
        for e in exprs:
            for node in walk_expr(e):
                if isinstance(node, ir.Name):
                    self.uses_seen.append((node, self.state.get(node.name, NOTHING)))

    def block(self, body):
        for s in body:
            if not self.live:
                return  # unreachable code after return/break/continue: nothing reaches it
            self.statement(s)

    def branch(self, body) -> tuple[bool, dict]:
        """Read one arm of an if from the current state, then undo it: (falls through, {name: value at its end})."""
        self.changes.append({})
        self.live = True
        self.block(body)
        changed = self.changes.pop()
        end = {name: self.state.get(name, NOTHING) for name in changed}
        for name, before in changed.items():
            self.state[name] = before
        return self.live, end

    def statement(self, s):
        if isinstance(s, ir.If):
            self.uses([s.cond])
            then_live, then_end = self.branch(s.body)
            else_live, else_end = self.branch(s.orelse)
            self.live = then_live or else_live
            if self.live:
                for name in then_end.keys() | else_end.keys():
                    before = self.state.get(name, NOTHING)
                    ends = ([then_end.get(name, before)] if then_live else []) + \
                        ([else_end.get(name, before)] if else_live else [])
                    self.set(name, _meet(ends))
            return
        if isinstance(s, (ir.While, ir.ForRange)):
            if isinstance(s, ir.ForRange):
                self.uses([s.start, s.stop, s.step])
            self.loop(s)
            return
        self.uses(stmt_exprs(s))
        if isinstance(s, ir.Assign):
            self.set(s.target.name, s.def_id)
        elif isinstance(s, ir.TupleCall):
            for t, d in zip(s.targets, s.def_ids):
                self.set(t.name, d)
        elif isinstance(s, ir.Return):
            self.live = False
        elif isinstance(s, (ir.Break, ir.Continue)):
            names, breaks, continues = self.loops[-1]
            (breaks if isinstance(s, ir.Break) else continues).append({n: self.state.get(n, NOTHING) for n in names})
            self.live = False

    def loop(self, s):
        names = self._assigned(s)
        heads = {name: Phi([self.state.get(name, NOTHING)]) for name in names}
        self.changes.append({})
        for name, phi in heads.items():
            self.set(name, phi)
        if isinstance(s, ir.While):
            self.uses([s.cond])
        else:
            self.set(s.target.name, s.def_id)
        self.loops.append((names, [], []))
        self.block(s.body)
        _, breaks, continues = self.loops.pop()
        back = ([{n: self.state.get(n, NOTHING) for n in names}] if self.live else []) + continues
        for name, phi in heads.items():
            phi.operands += [values[name] for values in back]
        for name, before in self.changes.pop().items():
            self.state[name] = before
        self.live = True  # the loop's test (or range) may end it: what follows is reached
        for name, phi in heads.items():
            exits = [phi] + [values[name] for values in breaks]
            if isinstance(s, ir.ForRange) and name == s.target.name:
                exits.append(s.def_id)  # after a loop that ran, the variable holds its last value
            self.set(name, _meet(exits))

    def _assigned(self, loop) -> set:
        key = id(loop)
        if key not in self.assigned_in:
            names = {loop.target.name} if isinstance(loop, ir.ForRange) else set()
            for s in walk_statements(loop.body):
                if isinstance(s, (ir.Assign, ir.ForRange)):
                    names.add(s.target.name)
                elif isinstance(s, ir.TupleCall):
                    names.update(t.name for t in s.targets)
            self.assigned_in[key] = names
        return self.assigned_in[key]

    # ------------------------------------------------------------ uses -> reaching definitions and webs
    def _resolve(self) -> None:
        """Each use's reaching definitions (node.defs: one of them, as they share a web; node.maybe_undefined)
        and the webs (defs.web_of), from the Phi graph, in time linear in its size."""
        phis, stack = [], [v for _, v in self.uses_seen if isinstance(v, Phi)]
        while stack:  # number the Phis the uses reach
            phi = stack.pop()
            if phi.key >= 0:
                continue
            phi.key = len(self.defs.sites) + len(phis)
            phis.append(phi)
            stack.extend(v for v in phi.operands if isinstance(v, Phi) and v.key < 0)
        has_def = _reaching(phis, lambda v: isinstance(v, int) and v >= 0)
        has_undef = _reaching(phis, lambda v: isinstance(v, int) and v == UNDEFINED)
        reach = _definitions(phis)
        parent = list(range(len(self.defs.sites) + len(phis)))

        def find(x):
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        # A Phi stands for the definitions it reaches, so uniting it with its operands unites those: only Phis
        # that reach some definition take part (one reaching none would join webs that share no definition).
        united = set()  # Phis whose reachable definitions are already in one web
        for _, value in self.uses_seen:
            if not isinstance(value, Phi) or value.key in united or not has_def[value.key]:
                continue
            stack = [value]
            united.add(value.key)
            while stack:
                phi = stack.pop()
                for v in phi.operands:
                    if isinstance(v, Phi):
                        if not has_def[v.key]:
                            continue
                        parent[find(v.key)] = find(phi.key)
                        if v.key not in united:
                            united.add(v.key)
                            stack.append(v)
                    elif v >= 0:
                        parent[find(v)] = find(phi.key)
        lowest: dict = {}  # web root -> its lowest definition, the web's name
        for d in range(len(self.defs.sites)):
            lowest.setdefault(find(d), d)
        self.defs.web_of = {d: lowest[find(d)] for d in range(len(self.defs.sites))}
        for node, value in self.uses_seen:
            if isinstance(value, Phi):
                node.defs = frozenset([lowest[find(value.key)]]) if has_def[value.key] else frozenset()
                node.maybe_undefined = has_undef[value.key]
                node.reach = reach[value.key]
            else:
                node.defs = frozenset([value]) if value >= 0 else frozenset()
                node.maybe_undefined = value == UNDEFINED
                node.reach = node.defs


def _meet(values):
    """The value where paths carrying `values` meet: the one value, or a Phi of them."""
    first = values[0]
    return first if all(v is first or v == first for v in values) else Phi(values)


def _reaching(phis, direct) -> dict:
    """Phi key -> whether a value satisfying `direct` is among its operands, followed through Phis."""
    users: dict = {}
    found = {phi.key: False for phi in phis}
    stack = []
    for phi in phis:
        for v in phi.operands:
            if isinstance(v, Phi):
                users.setdefault(v.key, []).append(phi)
            elif direct(v) and not found[phi.key]:
                found[phi.key] = True
                stack.append(phi)
    while stack:
        for user in users.get(stack.pop().key, ()):
            if not found[user.key]:
                found[user.key] = True
                stack.append(user)
    return found


def _definitions(phis) -> dict:
    """Phi key -> the definitions that reach it through Phis: the incoming values Numba's phi node unifies.
    Sets only grow, each bounded by one name's definitions, so the worklist ends."""
    users: dict = {}
    found = {}
    for phi in phis:
        found[phi.key] = frozenset(v for v in phi.operands if not isinstance(v, Phi) and v >= 0)
        for v in phi.operands:
            if isinstance(v, Phi):
                users.setdefault(v.key, []).append(phi)
    stack = [phi for phi in phis if found[phi.key]]
    while stack:
        phi = stack.pop()
        for user in users.get(phi.key, ()):
            wider = found[user.key] | found[phi.key]
            if wider != found[user.key]:
                found[user.key] = wider
                stack.append(user)
    return found


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
    """Definitions that reach a common use, united (computed by ReachingDefs.run); def id -> web representative.
    Reports each use no definition reaches."""
    for s in walk_statements(fn.body):
        for e in stmt_exprs(s):
            for node in walk_expr(e):
                if isinstance(node, ir.Name) and not node.defs:
                    reporter.add_unsupported(Unsupported(
                        node.node or s.node, f"'{node.name}' used before assignment",
                        "no assignment of it reaches this use", f"assign {node.name} before using it"))
    return defs.web_of
