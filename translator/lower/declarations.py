"""typed KernelIR -> where each C variable is declared: at its first assignment when that is safe, else ahead of the block.

Python variables live for the whole function; C variables live in a block. A variable
first assigned unconditionally is declared right there (`float p = 0.0f;`). One first
assigned inside a branch, or carried from one loop iteration to the next, is declared
before the statement that first mentions it, outside any loop that would re-create it.
"""

from __future__ import annotations

from ..ir import nodes as ir
from ..analysis.dataflow import defined_vars, stmt_exprs, sub_blocks, walk_expr, walk_statements


def _mentions(s) -> set:
    """Variables a statement itself (not its nested blocks) reads or writes."""
    out = set()
    for e in stmt_exprs(s):
        for node in walk_expr(e):
            if isinstance(node, ir.Name) and node.var is not None:
                out.add(node.var)
    if isinstance(s, (ir.Assign, ir.ForRange)):
        out.add(s.target.var)
    elif isinstance(s, ir.TupleCall):
        out.update(t.var for t in s.targets)
    return out


def _occurrences(body, path, found, loops):
    for i, s in enumerate(body):
        here = path + [(id(body), i, body)]
        for var in _mentions(s):
            found.setdefault(var, []).append(here)
        for sub in sub_blocks(s):
            _occurrences(sub, here, found, loops + ([s] if isinstance(s, (ir.ForRange, ir.While)) else []))


def defines(body, var) -> bool:
    return var in defined_vars(body)


def _mentions_var(e, var) -> bool:
    return any(isinstance(n, ir.Name) and n.var is var for n in walk_expr(e))


def _arrays_mentioned(s) -> set:
    """ids of the arrays a statement itself (not its nested blocks) reads, writes, views or declares."""
    out = set()

    def add(arr):
        while arr is not None:
            out.add(id(arr))
            arr = arr.base

    for e in stmt_exprs(s):
        for node in walk_expr(e):
            if isinstance(node, (ir.Load, ir.ArrayRef)):
                add(node.array)
    if isinstance(s, ir.ArrayDecl):
        add(s.array)
    elif isinstance(s, ir.ArrayBind):
        for src in (s.source, s.orelse):
            add(src)
    return out


def hoist_arrays(fn: ir.Function) -> None:
    """A local or shared array made inside a block and used after it (a ray tracer's `hit_point`, made on the
    branch that goes on and read after the if, the other branches having left the loop): Numba allocates every
    such array once, at the function's entry, so C declares it before the top-level statement that holds it."""
    for k in range(len(fn.body) - 1, -1, -1):
        top = fn.body[k]
        inner = [(s, blk) for sub in sub_blocks(top) for s, blk in _with_blocks(sub)
                 if isinstance(s, ir.ArrayDecl) and s.array.kind in ("local", "shared")]
        if not inner:
            continue
        mentioned = [(id(x), _arrays_mentioned(x)) for x in walk_statements([top])]  # once per statement
        hoisted = []
        for decl, block in inner:
            inside = {id(x) for x in walk_statements(block)}
            if any(id(decl.array) in arrays for key, arrays in mentioned if key not in inside):
                block.remove(decl)
                hoisted.append(decl)
        fn.body[k:k] = hoisted


def _with_blocks(body):
    """(statement, the block holding it) for every statement of BODY, nested ones included."""
    for s in body:
        yield s, body
        for sub in sub_blocks(s):
            yield from _with_blocks(sub)


def plan_declarations(fn: ir.Function) -> None:
    hoist_arrays(fn)
    found: dict = {}
    _occurrences(fn.body, [], found, [])
    inserts: dict = {}  # id(block) -> (block, {index: [vars]})
    for var in fn.variables:
        if var.is_param or var not in found:
            continue
        paths = found[var]
        depth = _common_prefix(paths)
        if any(len(p) == depth for p in paths) or len({id(p[depth][2]) for p in paths}) > 1:
            # mentioned in the header of a statement that contains the other mentions, or in different blocks of
            # one statement (an if's body and its elif): declared before that statement
            depth -= 1
        block = paths[0][depth][2]
        index = min(p[depth][1] for p in paths)
        first = block[index]
        only_here = all(len(p) == depth + 1 for p in paths if p[depth][1] == index)
        if isinstance(first, ir.Assign) and first.target.var is var and only_here \
                and not _mentions_var(first.value, var):
            first.declare = True
            continue
        if isinstance(first, ir.ForRange) and first.target.var is var and all(p[depth][1] == index for p in paths):
            if not defines(first.body, var):
                first.declare = True
                continue
        hoisted = _outside_loops(paths[0][: depth + 1])
        if hoisted is not None:
            block, index = hoisted
        inserts.setdefault(id(block), (block, {}))[1].setdefault(index, []).append(var)
    _plan_loops(fn.body, getattr(fn, "names", None))
    for block, by_index in inserts.values():
        for index in sorted(by_index, reverse=True):
            for var in reversed(by_index[index]):
                block.insert(index, ir.Declare(var=var))


def _common_prefix(paths) -> int:
    n = min(len(p) for p in paths)
    for d in range(n):
        key = paths[0][d][:2]
        if any(p[d][:2] != key for p in paths):
            return d
    return n


def _outside_loops(prefix):
    """The block and index just above the outermost loop on `prefix`: a declaration there survives iterations."""
    for d, (_, i, block) in enumerate(prefix):
        if isinstance(block[i], (ir.ForRange, ir.While)) and d + 1 < len(prefix):
            return block, i
    return None


def _plan_loops(body, names):
    for s in walk_statements(body):
        if isinstance(s, ir.ForRange):
            if not getattr(s, "declare", False):
                # the Python variable outlives the loop or is reassigned in it: the C loop counts in its own
                var = s.target.var
                s.counter = names.claim_as(("counter", var), f"{var.c_name}_") if names else f"{var.c_name}_"
            # the C loop copies its counter into the variable each iteration: a bound reading it changes too
            copied = {s.target.var} if getattr(s, "counter", None) else set()
            s.hoist_stop = not _invariant(s.stop, s.body, copied)
            s.hoist_step = not _invariant(s.step, s.body, copied)  # C adds it (or multiplies by it) each time
            s.hoist_start = not _invariant(s.start, s.body, copied)  # read in the body where the sign is unknown


def _invariant(e, body, copied=frozenset()) -> bool:
    """Python evaluates range()'s bounds once; C re-evaluates the condition (and the step), so they must not change."""
    assigned = defined_vars(body) | set(copied)
    for node in walk_expr(e):
        if isinstance(node, ir.Name) and node.var in assigned:
            return False
        if isinstance(node, (ir.Load, ir.DeviceCall)):
            return False
        if isinstance(node, ir.Call) and not node.intrinsic.key.startswith(("math.", "np.", "min", "max", "abs")):
            return False
    return True
