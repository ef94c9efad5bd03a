"""Where a module's code would make and launch a kernel that importing it does not: the test methods, `main()`
and `if __name__ == "__main__":` block that reach the function a kernel is defined in.

Numba compiles a kernel made inside a function (a test method, a helper a test calls, a factory) with the
values that call gives, and a kernel without a signature with the types of its first launch. Importing the
module makes neither. The import mode (frontend/probe.py) therefore runs, after the import, the entry points
found here, in the order given, until each such kernel has been made and launched. Found from the source with
Python's own `ast` (the child reads it too, without libcst), by names only: a function reaches another when its
body names it (`helper(...)`, `self.helper(...)`), which over-approximates calls and never runs anything.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field

#: module-level functions run as entry points besides test functions (a script's own driver)
DRIVERS = ("main",)
MAIN_BLOCK = "if __name__ == '__main__'"


@dataclass
class Target:
    """A kernel the import alone does not finish: made inside a function, or launched without a signature."""
    name: str
    line: int  # its code object's first line: the first decorator's, else the `def`'s
    anchor: str  # the module-level function or method it is defined in, else its own name


@dataclass
class Plan:
    targets: list = field(default_factory=list)
    entries: list = field(default_factory=list)  # qualnames ("Class.method", "main") and MAIN_BLOCK, in run order
    reaches: dict = field(default_factory=dict)  # a target's anchor -> the entries that reach it


def _is_main_test(test) -> bool:
    return ast.unparse(test).replace('"', "'") == "__name__ == '__main__'"


def _jit_text(node) -> bool:
    return "jit" in ast.unparse(node)


def _names(node) -> set:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
    return out


def _required(fn, method: bool) -> int:
    args = fn.args
    positional = args.posonlyargs + args.args
    count = len(positional) - len(args.defaults) - (1 if method else 0)
    return max(count, 0) + sum(1 for kw, d in zip(args.kwonlyargs, args.kw_defaults) if d is None)


class _Scan(ast.NodeVisitor):
    def __init__(self):
        self.stack: list = []  # enclosing ClassDef/FunctionDef nodes
        self.functions: dict = {}  # qualname -> (node, is method of a module-level class)
        self.targets: list = []
        self.jit_args: set = set()  # names passed to a call of something named *jit*: cuda.jit(sig)(fn)
        self.main_block = None
        self.aliases: dict = {}  # "Class.run_unary" -> names its value names (`run_unary = run_func`)
        self.top_names: set = set()  # names assignments at the module's top level bind

    def visit_Assign(self, node) -> None:
        if not self.stack:
            for target in node.targets:
                self.top_names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        self.generic_visit(node)

    def visit_If(self, node) -> None:
        if not self.stack and _is_main_test(node.test):
            self.main_block = node
        self.generic_visit(node)

    def visit_Call(self, node) -> None:
        if isinstance(node.func, ast.Call) and _jit_text(node.func.func) or _jit_text(node.func):
            self.jit_args.update(a.id for a in node.args if isinstance(a, ast.Name))
        self.generic_visit(node)

    def visit_ClassDef(self, node) -> None:
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and not self.stack:
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        self.aliases[f"{node.name}.{target.id}"] = _names(stmt.value)
        self.stack.append(node)
        self.generic_visit(node)
        self.stack.pop()

    def visit_FunctionDef(self, node) -> None:
        functions = [n for n in self.stack if isinstance(n, ast.FunctionDef)]
        qual = ".".join(n.name for n in self.stack + [node])
        if not functions and (not self.stack or len(self.stack) == 1):
            self.functions[qual] = (node, bool(self.stack))
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        jitted = any(_jit_text(d) for d in node.decorator_list)
        # no signature: `@cuda.jit`, or options only (`@cuda.jit(fastmath=True)`): typed at the first launch
        lazy = jitted and all(isinstance(d, (ast.Name, ast.Attribute)) or isinstance(d, ast.Call) and not d.args
                              for d in node.decorator_list)
        anchor = ".".join(n.name for n in self.stack[:self.stack.index(functions[0]) + 1]) if functions else qual
        self.targets.append((node, first, anchor, jitted if functions or lazy else None))
        self.stack.append(node)
        self.generic_visit(node)
        self.stack.pop()

    visit_AsyncFunctionDef = visit_FunctionDef


@functools.lru_cache(maxsize=16)  # a module's messages ask for it once per kernel
def plan(source: str, wanted: tuple = ()) -> Plan:
    """The kernels importing SOURCE leaves unfinished, and the entry points that reach them, nearest first:
    those made inside a function or without a signature, and functions given to cuda.jit(...) where code
    runs; where WANTED (--kernel: `name` or `Class.method.name`) names kernels, those only, however made."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return Plan()
    scan = _Scan()
    scan.visit(tree)
    names = {w.rsplit(".", 1)[-1] for w in wanted}
    targets = [Target(node.name, first, anchor) for node, first, anchor, jitted in scan.targets
               if (jitted or node.name in scan.jit_args or node.name in names)
               and (not names or node.name in names)]
    defined = {node.name for node, *_ in scan.targets}
    # a wanted name no def here defines, bound at the top level: a function a template made (exec), which a
    # test compiles (`cuda.jit(sig)(atomic_max)`); line 0 marks it, matched by the module's binding
    targets += [Target(name, 0, name) for name in sorted(names - defined) if name in scan.top_names]
    callers: dict = {}  # simple name -> qualnames whose body names it
    for qual, (node, _) in scan.functions.items():
        for name in _names(node) - {node.name}:
            callers.setdefault(name, set()).add(qual)
    for qual, names in scan.aliases.items():
        for name in names:
            callers.setdefault(name, set()).add(qual)
    main_names = _names(scan.main_block) if scan.main_block is not None else set()
    main_sets = {n.id for n in ast.walk(scan.main_block) if isinstance(n, ast.Name) and
                 isinstance(n.ctx, ast.Store)} if scan.main_block is not None else set()
    defs = {node.name: node for node, *_ in scan.targets}
    found = Plan(targets)
    for target in targets:
        reached, frontier = set(), [target.anchor]
        while frontier:
            qual = frontier.pop()
            if qual not in reached:
                reached.add(qual)
                frontier.extend(callers.get(qual.rsplit(".", 1)[-1], ()))
        runs = sorted((q for q in reached if q in scan.functions and _runnable(q, *scan.functions[q], target)),
                      key=lambda q: (q != target.anchor, scan.functions[q][0].lineno))
        # the block launches the kernel, or sets a name it (or a function it calls) reads: `STEP = grid[1] -
        # grid[0]` under the guard of a script whose kernel reads STEP
        if main_names & {q.rsplit(".", 1)[-1] for q in reached} or main_sets & _reads(defs.get(target.name), defs):
            runs.append(MAIN_BLOCK)
        found.reaches[target.anchor] = runs
        found.entries.extend(q for q in runs if q not in found.entries)
    return found


def _reads(node, defs: dict, depth: int = 0) -> set:
    """The names NODE's body reads, and those of the functions of DEFS it names (device functions), 3 deep."""
    if node is None:
        return set()
    read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    if depth < 3:
        for name in read & set(defs):
            if defs[name] is not node:
                read |= _reads(defs[name], defs, depth + 1)
    return read


def _runnable(qual: str, node, method: bool, target: Target) -> bool:
    """Whether the import mode may call QUAL: a test, the script's driver, or the module-level function the
    kernel is made in (a factory without parameters), with no arguments; or a test whose
    @pytest.mark.parametrize gives them (its first case)."""
    last = qual.rsplit(".", 1)[-1]
    wanted = last.startswith("test") or (not method and (last in DRIVERS or qual == target.anchor))
    parametrized = last.startswith("test") and any("parametrize" in ast.unparse(d) for d in node.decorator_list)
    return wanted and (_required(node, method) == 0 or parametrized)


def main_block(source: str, path: str):
    """The code of SOURCE's `if __name__ == "__main__":` body, compiled with its own line numbers, or None."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and _is_main_test(node.test):
            return compile(ast.Module(body=node.body, type_ignores=[]), path, "exec")
    return None


def reaching(source: str, name: str, line: int) -> list:
    """The entry points the import mode would run for the function NAME whose def (or first decorator) is at
    LINE of SOURCE, nearest first."""
    found = plan(source, (name,))
    candidates = [t for t in found.targets if t.name == name and t.line <= line]
    if not candidates:
        return []
    return list(found.reaches.get(max(candidates, key=lambda t: t.line).anchor, ()))


@functools.lru_cache(maxsize=16)
def top_launch(source: str, name: str) -> int | None:
    """The line of SOURCE's first launch of kernel NAME (`name[grid, block](...)`) that importing the module runs
    (its top level, outside functions, classes and the `__main__` block), else None."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or \
                (isinstance(stmt, ast.If) and _is_main_test(stmt.test)):
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) and \
                    isinstance(node.func.value, ast.Name) and node.func.value.id == name:
                return node.lineno
    return None
