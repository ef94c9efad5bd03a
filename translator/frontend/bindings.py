"""A module's or an enclosing function's statements -> what each name holds when a kernel compiles, where that
can be known without running anything.

Numba reads a kernel's free names (module globals and closure variables) when it compiles the kernel, at the
first launch. A name bound once to a constant expression holds that constant then, wherever the binding is;
so does one set under an `if` whose test is itself a constant (`if USE_DOUBLE:`, `if config.ENABLE_CUDASIM:`,
which is False on the GPU numba2cuda translates for), or set to the same constant on every branch. For every
other name the reason is recorded (assigned twice, set under an undecidable test, computed by a call), and
whether running the module would tell (`needs_run`: the import mode's flag is then the hint).
"""

from __future__ import annotations

import importlib
import re
from typing import TYPE_CHECKING

import libcst as cst

from .constants import ConstEvalError, const_eval, reads_argv
from .decorators import cuda_jit_arm
from .names import dotted, resolve
from .scan import find_nodes
from .siblings import SiblingImports

if TYPE_CHECKING:
    from .info import ModuleInfo

_TABLES = ("constants", "nonconstant", "value_nodes", "needs_run", "aliases")


def _plain_defaults(fn: cst.FunctionDef) -> bool:
    """Whether defining FN evaluates nothing that may raise: its defaults are literals or names."""
    params = fn.params
    return all(p.default is None or isinstance(p.default, (cst.Name, cst.Integer, cst.Float, cst.SimpleString,
                                                                cst.List, cst.Tuple))
               for p in (*params.posonly_params, *params.params, *params.kwonly_params))


def _is_main_guard(test) -> bool:
    """`__name__ == "__main__"` (either way round)."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Equal)):
        return False
    sides = [test.left, test.comparisons[0].comparator]
    return any(isinstance(a, cst.Name) and a.value == "__name__" for a in sides) and any(
        isinstance(a, cst.SimpleString) and a.evaluated_value == "__main__" for a in sides)


def why_not_constant(node, owner: str | None = None) -> str:
    runs = "the module runs" if owner is None else f"'{owner}' runs"
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return "is a string; kernels have no strings"
    if isinstance(node, cst.Call):
        return f"is computed when {runs} (by a call), and numba2cuda does not run the module"
    if isinstance(node, cst.List):
        return "is a Python list, and Numba rejects a global list in a kernel (write a tuple: (1, 2, 3))"
    if isinstance(node, (cst.Dict, cst.Set)):
        return "is a Python container; kernels cannot use lists, dicts or sets"
    return "is not a constant numba2cuda can evaluate without running the module"


PARAMETER_OF = "is a parameter of '{}', known only when it is called"  # why a factory's parameter is unknown
INT_ENUMS = {"enum.IntEnum", "enum.IntFlag", "IntEnum", "IntFlag"}


class Binder(SiblingImports):
    """Fills a ModuleInfo's (or scope view's) name tables from statements, in the order they run."""

    def __init__(self, view: ModuleInfo, owner: str | None = None, sibling=None):
        self.view = view
        self.owner = owner  # None at module level, else the enclosing function's name
        self.sibling = sibling  # (module name, level) -> the sibling module's ModuleInfo or None
        self.bound: set = set()
        self.loop_depth = 0
        self.branch_depth = 0
        self.argv_tests: set = set()  # names bound under an `if` decided by reading sys.argv

    # ------------------------------------------------------------ entry
    def run(self, statements) -> None:
        for stmt in statements:
            self.statement(stmt)

    def bind_parameters(self, fn: cst.FunctionDef, values: dict | None = None) -> None:
        """The enclosing function's parameters: constants when a call gives them (a factory called at module
        level with constant arguments), otherwise known only when it is called."""
        params = fn.params
        names = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                names.append(star.name.value)
        for name in names:
            self.bound.add(name)
            if values is not None and name in values:
                self._set_constant(name, values[name], None)
            else:
                self._unknown(name, PARAMETER_OF.format(fn.name.value), run=True)

    # ------------------------------------------------------------ statements
    def statement(self, stmt) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small(small)
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            self._unbind(stmt.name.value)
            if isinstance(stmt, cst.ClassDef):
                self.enum_members(stmt)
        elif isinstance(stmt, cst.If):
            self.if_statement(stmt)
        elif isinstance(stmt, (cst.For, cst.While)):
            if isinstance(stmt, cst.For):
                self._bind_target(stmt.target, "is a loop variable")
            self.loop_depth += 1
            self.block(stmt.body)
            if stmt.orelse is not None:
                self.block(stmt.orelse.body)
            self.loop_depth -= 1
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                if item.asname is not None:
                    self._bind_target(item.asname.name, "is bound by a with statement")
            self.block(stmt.body)
        elif isinstance(stmt, cst.Try) and _imports_that_succeed(stmt.body):
            # `try: from math import nan / except ImportError: nan = float('nan')`: the import cannot fail
            self.block(stmt.body)
            if stmt.orelse is not None:
                self.block(stmt.orelse.body)
            if stmt.finalbody is not None:
                self.block(stmt.finalbody.body)
        elif isinstance(stmt, (cst.Try, cst.TryStar)):
            self.branches([[stmt.body] + ([stmt.orelse.body] if stmt.orelse else [])]
                          + [[h.body] for h in stmt.handlers], "a try statement", stmt)
            if stmt.finalbody is not None:
                self.block(stmt.finalbody.body)
        elif isinstance(stmt, cst.Match):
            self.branches([[case.body] for case in stmt.cases] + [[]], "a match statement", stmt)

    def enum_members(self, cls: cst.ClassDef) -> None:
        """`class Mode(IntEnum): ADD = 0; MUL = auto()`: Numba reads an IntEnum's (or IntFlag's) members in
        kernels as their integers, so `Mode.ADD` is a constant here."""
        bases = {resolve(self.view, b.value) or self.view.code(b.value) for b in cls.bases}
        if not bases & INT_ENUMS or not isinstance(cls.body, cst.IndentedBlock):
            return
        last = 0
        for stmt in cls.body.body:
            for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                        and isinstance(small.targets[0].target, cst.Name)):
                    continue
                value = small.value
                if isinstance(value, cst.Call) and resolve(self.view, value.func) in ("enum.auto", "auto") \
                        and not value.args:
                    last = last + 1  # auto(): one more than the member before (1 for the first)
                else:
                    try:
                        last = const_eval(self.view, value)
                    except ConstEvalError:
                        continue
                    if not isinstance(last, int) or isinstance(last, bool):
                        return  # not an integer enum after all
                self.view.constants[f"{cls.name.value}.{small.targets[0].target.value}"] = last

    def numbapro(self, module: str, node) -> str:
        """MODULE, with NumbaPro (Numba's commercial predecessor, whose CUDA support became numba.cuda in 2017)
        read as numba, as an old tutorial's `from numbapro import cuda` means: a note says so."""
        if module != "numbapro" and not module.startswith("numbapro."):
            return module
        if not self.view.imports_numbapro:
            self.view.imports_numbapro = True
            self.view.notices.append(self.view.reporter.make(
                node, "import of numbapro", "NumbaPro is Numba's predecessor, whose CUDA support became numba.cuda; "
                "numbapro is read as numba (Numba runs such a kernel once the import says numba)"))
        return "numba" + module[len("numbapro"):]

    def block(self, body) -> None:
        if isinstance(body, cst.SimpleStatementSuite):
            for small in body.body:
                self.small(small)
        else:
            self.run(body.body)

    def small(self, small) -> None:
        if isinstance(small, cst.Import):
            for alias in small.names:
                full = self.numbapro(dotted(alias.name), small)
                local = alias.asname.name.value if alias.asname else full.split(".")[0]
                self.import_name(local, full if alias.asname else local, None, 0)
                if not alias.asname and "." in full and self.sibling is not None:
                    self.module_names(full, self.sibling(full, 0))  # `import solver.wave`: solver.wave.pulse()
        elif isinstance(small, cst.ImportFrom):
            mod = self.numbapro(dotted(small.module), small) if small.module is not None else ""
            level = len(small.relative)
            if isinstance(small.names, cst.ImportStar):
                self.star_import(mod, level)
                return
            for alias in small.names:
                name = alias.name.value
                local = alias.asname.name.value if alias.asname else name
                qualified = "." * level + (f"{mod}.{name}" if mod else name)
                if qualified == "numba.numba":  # `from numba import cuda, numba`: the package names itself
                    qualified = "numba"
                self.import_name(local, qualified, (mod, level, name), level)
        elif isinstance(small, cst.Assign):
            for target in small.targets:
                self.assign(target.target, small.value)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            self.assign(small.target, small.value)
        elif isinstance(small, cst.AugAssign):
            self._bind_target(small.target, "is changed in place")
        elif isinstance(small, (cst.Global, cst.Nonlocal)):
            for item in small.names:
                self._unknown(item.name.value, "is rebound through a global/nonlocal statement")
        elif isinstance(small, cst.Del):
            self._bind_target(small.target, "is deleted")

    def assign(self, target, value) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements) and not any(
                    isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
                for t, v in zip(target.elements, value.elements):
                    self.assign(t.value, v.value)
            else:
                self._bind_target(target, "is unpacked from a value numba2cuda cannot evaluate")
            return
        if not isinstance(target, cst.Name):
            return  # an attribute or an element: not a name binding
        name = target.value
        self._history(name, value)
        if name in self.bound:
            where = "at module level" if self.owner is None else f"in '{self.owner}'"
            self._unknown(name, f"is assigned more than once {where}, so its value is unknown",
                          run=self.owner is None)  # the import mode reads the value the module ends with
            return
        self.bound.add(name)
        if self.loop_depth:
            # the import mode reads what it holds when the kernel compiles (its first launch)
            self._unknown(name, "is assigned in a loop, so its value when the kernel compiles is unknown", run=True)
            return
        self.view.value_nodes[name] = value
        try:
            result = const_eval(self.view, value)
        except ConstEvalError:
            qualified = self._qualified(value)
            if qualified is not None:  # nbtype = float32, DT = np.float32, sq = math.sqrt: another name for it
                self.view.nonconstant.pop(name, None)
                self.view.aliases[name] = qualified
                return
            self._unknown(name, why_not_constant(value, self.owner), run=not isinstance(value, (
                cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.List, cst.Dict, cst.Set)))
            return
        self._set_constant(name, result, value)
        if reads_argv(self.view, value) or name in self.argv_tests:
            # noted where a kernel reads it (expr.named_constant): the module's other settings are not ours
            self.view.value_notes[name] = self.view.reporter.make(
                value, f"{name} = {self.view.code(value)}", f"taken as {result!r}, sys.argv read as when the module "
                "runs without arguments (`python FILE`); Numba reads the arguments of the process that compiles "
                "the kernel")

    # ------------------------------------------------------------ if / try: branches
    def if_statement(self, stmt: cst.If) -> None:
        try:
            test = const_eval(self.view, stmt.test)
            decided = True
        except ConstEvalError:
            decided = False
        if decided:
            taken = stmt.body if _truthy(test) else stmt.orelse
            if reads_argv(self.view, stmt.test):  # names it binds are noted as read from sys.argv
                self.argv_tests |= _assigned_names(taken)
            if isinstance(taken, cst.If):
                self.if_statement(taken)
            elif taken is not None:
                self.block(taken.body if isinstance(taken, cst.Else) else taken)
            return
        arms, node = [], stmt
        while True:
            arms.append([node.body])
            if isinstance(node.orelse, cst.If):
                node = node.orelse
                continue
            arms.append([node.orelse.body] if node.orelse is not None else [])
            break
        script = self.owner is None and _is_main_guard(stmt.test) and len(arms) == 2
        self.branches(arms, f"`if {self.view.code(stmt.test)}`", stmt, script=script)

    def branches(self, arms: list, what: str, stmt, script: bool = False) -> None:
        """Run each arm from the same start; a name keeps a value only if every arm gives it that value."""
        start = self._snapshot()
        results = []
        self.branch_depth += 1
        for arm in arms:
            self._restore(start)
            for body in arm:
                self.block(body)
            results.append(self._snapshot())
        self.branch_depth -= 1
        self._restore(start)
        line = self.view.reporter.location(stmt).line
        # a name an arm binds anew, or rebinds (its value node, or its reason, changes: `TPB = 32` under the arm
        # of `TPB = 16` is 'assigned more than once' there, with the module's value node left as it was)
        touched = set().union(*(r["bound"] - start["bound"] for r in results), *(
            {n for n in r["bound"] & start["bound"] if r["value_nodes"].get(n) is not start["value_nodes"].get(n)
             or r["nonconstant"].get(n) != start["nonconstant"].get(n)}
            for r in results))
        for r in results:
            self.view.aliases.update(r["aliases"])
        for name in sorted(touched):
            values = [r["constants"].get(name, _MISSING) for r in results]
            first = values[0]
            same = first is not _MISSING and name not in start["bound"] and all(
                v is not _MISSING and type(v) is type(first) and v == first for v in values)
            self.bound.add(name)
            if same:
                self._set_constant(name, first, results[0]["value_nodes"].get(name))
            elif script and first is not _MISSING and name not in start["bound"] and \
                    values[1] is _MISSING and name not in results[1]["bound"]:
                # bound only by the script's block (`blockdim = (32, 8)` before its launch): a kernel reading it
                # works only when the file runs as a script (imported, the name does not exist), so it sees this
                node = results[0]["value_nodes"].get(name)
                self._set_constant(name, first, node)
                self.view.value_notes[name] = self.view.reporter.make(
                    node if node is not None else stmt, f"'{name}'", f"taken as {first!r}, as the file run as a "
                    f"script sets it under `if __name__ == \"__main__\":` (line {line}); imported, the kernel "
                    "would find no such name")
            elif (arm := cuda_jit_arm(self.view, [r["value_nodes"].get(name) for r in results])) is not None:
                # ray tracing's `device_decorator = cuda.jit(device=True)` under `if cuda.is_available():`
                self.view.nonconstant.pop(name, None)
                self.view.value_nodes[name] = arm
                self.view.notices.append(self.view.reporter.make(arm, f"'{name}'", f"taken as "
                                         f"{self.view.code(arm)}, its value on one arm of {what} (line {line}): "
                                         "the other arms bind what kernels cannot call"))
            else:
                self._unknown(name, f"is set under {what} (line {line}), which numba2cuda cannot decide "
                                    "without running the module", run=True)

    def _qualified(self, value) -> str | None:
        """The qualified name a Name or dotted Attribute refers to through the imports, or None."""
        name = dotted(value)
        if not name:
            return None
        head, _, rest = name.partition(".")
        if head not in self.view.aliases:
            return None
        return self.view.aliases[head] + ("." + rest if rest else "")

    def _history(self, name, value) -> None:
        """Straight-line assignments (not under an if, a loop or a try) in order: with the line a kernel compiles
        at, they tell which one it sees (discover.py). Any other binding of the name spoils them."""
        history = self.view.history
        if value is not None and not self.loop_depth and not self.branch_depth and history.get(name, []) is not None:
            history.setdefault(name, []).append((self.view.reporter.location(value).line, value))
        else:
            history[name] = None

    # ------------------------------------------------------------ tables
    def _set_constant(self, name, value, node) -> None:
        self.view.constants[name] = value
        self.view.nonconstant.pop(name, None)
        self.view.needs_run.discard(name)
        if name in self.view.aliases and node is not None:
            del self.view.aliases[name]

    def _unknown(self, name, reason, run=False) -> None:
        self.view.constants.pop(name, None)
        self.view.nonconstant[name] = reason
        if run:
            self.view.needs_run.add(name)
        else:
            self.view.needs_run.discard(name)

    def _unbind(self, name) -> None:
        """A def, class or import rebinds NAME: no longer a constant of an outer scope."""
        self.view.constants.pop(name, None)
        self.view.nonconstant.pop(name, None)

    def _bind_target(self, target, reason) -> None:
        if isinstance(target, cst.Name):
            self._history(target.value, None)
            self.bound.add(target.value)
            self._unknown(target.value, reason)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._bind_target(el.value, reason)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value, reason)

    def _snapshot(self) -> dict:
        out = {t: (set(getattr(self.view, t)) if t == "needs_run" else dict(getattr(self.view, t))) for t in _TABLES}
        out["bound"] = set(self.bound)
        return out

    def _restore(self, snap) -> None:
        for t in _TABLES:
            table = getattr(self.view, t)
            table.clear()
            table.update(snap[t])
        self.bound = set(snap["bound"])


def factory_of(reason: str) -> str | None:
    """The enclosing function a nonconstant REASON says the name is a parameter of, else None."""
    prefix = PARAMETER_OF.split("{}")[0]
    return reason[len(prefix):].split("'")[0] if reason.startswith(prefix) else None


def computed_in(reason: str) -> str | None:
    """The enclosing function a nonconstant REASON says computes the name when it runs, else None."""
    m = re.match(r"is computed when '([^']+)' runs", reason)
    return m.group(1) if m else None


def called_at_import(info: ModuleInfo, function: str) -> bool:
    """Whether a statement at module level calls FUNCTION (so importing the module makes what it makes)."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node) -> bool:
            return False

        def visit_ClassDef(self, node) -> bool:
            return False

        def visit_Call(self, node) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == function:
                found.append(node)

    info.module_info.module.visit(Finder())
    return bool(found)


_MISSING = object()


def _truthy(value) -> bool:
    return bool(getattr(value, "value", value))


def _assigned_names(node) -> set:
    if node is None:
        return set()
    return {n.target.value for n in find_nodes(node, lambda n: isinstance(n, cst.AssignTarget)
                                               and isinstance(n.target, cst.Name))}


# modules whose names the translator may look up by importing them itself: the standard library's math and
# NumPy, which every installation of numba2cuda has (importing them runs nothing of the user's)
#: modules whose import cannot fail where a translated kernel runs (Numba's own, and what it needs)
_SAFE_MODULES = ("math", "cmath", "numpy", "numba", "numba.cuda")


def _imports_that_succeed(body) -> bool:
    """Is BODY only `from math import nan`-like imports of names those modules have, and definitions of plain
    functions (a project's `try: from numba.cuda import jit as cuda_jit ... def helper(): ...`), so that a try
    around it never goes to its handlers?"""
    lines = body.body if isinstance(body, cst.IndentedBlock) else None
    if not lines or not all(isinstance(line, cst.SimpleStatementLine) or (
            isinstance(line, cst.FunctionDef) and not line.decorators and _plain_defaults(line)) for line in lines):
        return False
    lines = [line for line in lines if isinstance(line, cst.SimpleStatementLine)]
    if not lines:
        return False
    for small in (s for line in lines for s in line.body):
        if not isinstance(small, cst.ImportFrom) or small.relative or isinstance(small.names, cst.ImportStar) \
                or dotted(small.module) not in _SAFE_MODULES:
            return False
        try:
            module = importlib.import_module(dotted(small.module))
        except ImportError:  # numba is not installed where numba2cuda runs: nothing to check against
            return False
        if not all(hasattr(module, alias.name.value) for alias in small.names):
            return False
    return True
