"""A kernel defined in a loop over values the source spells -> one kernel per iteration, each with that iteration's
values bound.

numba-cuda's tests make kernels in loops (`for operator, modifier in load_operators:` then `@cuda.jit def f(r, x):
... operator(x, i)`). Each iteration defines a new `f`, and Numba compiles it, at its first launch, with the
closure's values of that iteration. numba2cuda reads such a loop where its iterable is a sequence written in the
source (a tuple or list literal, a name bound once to one, a sum of those, or `range` of constants): each element
is bound to the loop's targets as an assignment binds it, in a scope view of its own, and the loop's body is read
once per element. A kernel that reads none of the names the loop binds (its targets and what its body assigns) is the
same in every iteration: it is read once.
"""

from __future__ import annotations

import re
from collections import ChainMap

import libcst as cst

from .bindings import Binder
from .closures import launches
from .constants import ConstEvalError, const_eval
from .decorators import jit_parts
from .info import CHAINED
from .names import resolve
from .scan import find_nodes

MAX_ITERATIONS = 32  # one C kernel each: past this the loop stays unread (its names unknown) rather than huge


MUTATORS = {"append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse", "add", "update",
            "discard", "__setitem__", "__iadd__"}


def loop_elements(view, iterable, enclosing: cst.FunctionDef, depth: int = 0) -> list | None:
    """The expressions ITERABLE runs through, where the source spells them; else None. A name must be bound once
    and never changed in place (`functions += [math.exp2]` under an `if`, `.append(...)`): its one binding is
    then what the loop sees."""
    node = iterable
    while isinstance(node, cst.Name) and depth < 8:
        if not _bound_once(view, node.value, enclosing):
            return None
        node, depth = view.value_nodes.get(node.value), depth + 1
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        left = loop_elements(view, node.left, enclosing, depth + 1)
        right = loop_elements(view, node.right, enclosing, depth + 1)
        return left + right if left is not None and right is not None else None
    if isinstance(node, (cst.Tuple, cst.List)):
        if any(isinstance(e, cst.StarredElement) for e in node.elements):
            return None
        return [e.value for e in node.elements]
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range" and \
            "range" not in view.aliases and "range" not in view.constants:
        try:
            bounds = [const_eval(view, a.value) for a in node.args if a.keyword is None]
        except ConstEvalError:
            return None
        if 1 <= len(bounds) <= 3 and all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
            values = range(*bounds)
            return [cst.Integer(str(v)) if v >= 0 else cst.UnaryOperation(cst.Minus(), cst.Integer(str(-v)))
                    for v in values] if len(values) <= MAX_ITERATIONS else None
    return None


def _bound_once(view, name: str, enclosing: cst.FunctionDef) -> bool:
    """Whether NAME is bound exactly once where it lives (ENCLOSING's body where that binds it, else the module's
    top level) and changed in place nowhere."""
    def bindings(scope) -> list:
        return find_nodes(scope, lambda n: (isinstance(n, cst.AssignTarget) and isinstance(n.target, cst.Name)
                                            or isinstance(n, (cst.AnnAssign, cst.AugAssign))
                                            and isinstance(n.target, cst.Name)
                                            or isinstance(n, cst.For) and isinstance(n.target, cst.Name)
                                            or isinstance(n, cst.NamedExpr) and isinstance(n.target, cst.Name))
                          and n.target.value == name and not (isinstance(n, cst.AnnAssign) and n.value is None),
                          enter=lambda n: not isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)))

    local = bindings(enclosing.body)
    found = local if local else bindings(view.module_info.module)
    if len(found) != 1 or isinstance(found[0], cst.AugAssign) or \
            any(isinstance(b, cst.Tuple) for b in found):  # (unpacking targets are not AssignTarget names)
        return False
    changed = find_nodes(view.module_info.module, lambda n: isinstance(n, cst.Call)
                         and isinstance(n.func, cst.Attribute) and isinstance(n.func.value, cst.Name)
                         and n.func.value.value == name and n.func.attr.value in MUTATORS
                         or isinstance(n, (cst.AssignTarget, cst.Del)) and isinstance(n.target, cst.Subscript)
                         and isinstance(n.target.value, cst.Name) and n.target.value.value == name)
    return not changed


def reads_loop_names(view, loop: cst.For) -> bool:
    """Whether a function LOOP's body compiles with cuda.jit reads a name the loop binds: its targets, or a name its
    body assigns (`bias = scale * 10`), which each iteration binds again."""
    targets = {n.value for n in find_nodes(loop.target, lambda n: isinstance(n, cst.Name))}
    targets |= {t.target.value for t in find_nodes(loop.body, lambda n: isinstance(n, cst.AssignTarget)
                                                   and isinstance(n.target, cst.Name),
                                                   enter=lambda n: not isinstance(n, (cst.FunctionDef, cst.Lambda)))}
    jitted = find_nodes(loop.body, lambda n: isinstance(n, cst.FunctionDef)
                        and any(jit_parts(view, d.decorator) is not None for d in n.decorators))
    return any(find_nodes(fn, lambda n: isinstance(n, cst.Name) and n.value in targets) for fn in jitted)


def iteration_labels(view, elements: list) -> list[str]:
    """C-name suffixes for the iterations: what the element starts with (`ldcg` of `(cuda.ldcg, "cg")`, `3`),
    or its index where those do not tell the iterations apart."""
    labels = []
    for element in elements:
        first = element
        while isinstance(first, (cst.Tuple, cst.List)) and first.elements:
            first = first.elements[0].value
        text = ""
        if isinstance(first, (cst.Name, cst.Attribute)):
            text = (resolve(view, first) or "").rpartition(".")[2]
        elif isinstance(first, (cst.Integer, cst.SimpleString, cst.Name)):
            text = first.value.strip("'\"")
        labels.append(re.sub(r"\W", "_", text)[:24])
    if any(not re.fullmatch(r"[A-Za-z0-9_]+", t) for t in labels) or len(set(labels)) < len(labels):
        return [str(k) for k in range(len(elements))]
    return labels


def compile_points(view, loop: cst.For) -> list | None:
    """For each statement of LOOP's body, how many of the body's statements have run when what it defines
    compiles: a kernel with a signature compiles at its definition, a lazy one at its first launch, which must
    be in the body (launched after the loop, every iteration's kernel would read the last iteration's values);
    other statements, at themselves. None where a lazy kernel is not launched in the body, or where the loop
    may stop an iteration early (break, continue): Numba makes no kernel for an iteration that skips the def."""
    body = loop.body.body
    if find_nodes(loop.body, lambda n: isinstance(n, (cst.Break, cst.Continue)),
                  enter=lambda n: not isinstance(n, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef))):
        return None
    points = []
    for k, stmt in enumerate(body):
        point = k
        for fn in find_nodes(stmt, lambda n: isinstance(n, cst.FunctionDef),
                             enter=lambda n: not isinstance(n, (cst.FunctionDef, cst.ClassDef))):
            parts = next((p for p in (jit_parts(view, d.decorator) for d in fn.decorators) if p is not None), None)
            if parts is None or _is_device(parts) or _has_signature(parts):
                continue
            launched = [j for j in range(k, len(body)) if launches(body[j], {fn.name.value})]
            if not launched:
                return None
            point = launched[0]
        points.append(point)
    return points


def _is_device(parts) -> bool:
    device = parts[1].get("device")
    return isinstance(device, cst.Name) and device.value == "True"


def _has_signature(parts) -> bool:
    return bool(parts[0]) or any(k in parts[1] for k in ("signature", "func_or_sig", "argtypes"))


class Iteration:
    """One iteration of an unrolled loop: scope views of VIEW with the loop's targets bound to ELEMENT and the
    body's first statements run, one view per compile point, all sharing the functions the iteration defines."""

    def __init__(self, view, loop: cst.For, element, sibling, owner: str):
        self.view, self.loop, self.element, self.sibling, self.owner = view, loop, element, sibling, owner
        self.tables = {name: ChainMap({}, getattr(view, name)) for name in CHAINED}
        self.views: dict = {}

    def at(self, point: int):
        """The iteration's view once POINT statements of the body have run."""
        if point not in self.views:
            sub = self.view.child(**self.tables)
            binder = Binder(sub, self.owner, self.sibling)
            binder.assign(self.loop.target, self.element)
            binder.run(self.loop.body.body[:point])
            self.views[point] = sub
        return self.views[point]
