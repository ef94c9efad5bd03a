"""What an enclosing function's names hold when its kernel compiles, and what a factory call binds: Numba reads a
kernel's closure variables when it compiles the kernel, at its definition when it has a signature, else at its
first launch, and keeps what it saw."""

from __future__ import annotations

import libcst as cst

from .constants import ConstEvalError, const_eval
from .decorators import body_of
from .info import FunctionInfo, ModuleInfo

def at_compile(view: ModuleInfo, fi: FunctionInfo, enclosing: cst.FunctionDef) -> ModuleInfo:
    """VIEW as the kernel sees it when it compiles (at its definition when it has a signature, else at its first
    launch; Numba keeps what it saw for every later launch): a name the enclosing function assigns several times
    (in straight-line code) holds the value it had then; an array changed in place before then (or when that
    moment is unknown) is not a constant."""
    changing = _changing(view)
    if not changing and not view.mutations:
        return view
    compiled, line = _compiled_at(view, fi, enclosing)
    for name, lines in view.mutations.items():
        if line is None or min(lines) < line:
            compiled.constants.pop(name, None)
            compiled.nonconstant[name] = (f"is a NumPy array changed in place (line {min(lines)}); Numba bakes in "
                                          "its values when the kernel compiles, which numba2cuda cannot tell from "
                                          "the source")
    return _bound_then(compiled, changing, line)


def module_at_compile(view: ModuleInfo, fi: FunctionInfo) -> ModuleInfo:
    """VIEW as a module-level kernel sees it when it compiles: a name the module binds several times in straight-line
    code (`W = np.array(...)` then `W = 0.25 * W`, as a notebook exported to .py does) holds its value then."""
    changing = _changing(view)
    if not changing:
        return view
    compiled, line = _compiled_at(view, fi, None)
    return _bound_then(compiled, changing, line)


def _changing(view: ModuleInfo) -> dict:
    """The names VIEW binds several times in straight-line code, none of whose values is a constant: name -> its
    bindings' (line, expression)."""
    return {n: h for n, h in view.history.items() if h and len(h) > 1 and n in view.nonconstant}


def _compiled_at(view: ModuleInfo, fi: FunctionInfo, enclosing):
    """(a copy of VIEW's name tables to change, the line the kernel compiles at): its definition with a signature,
    else its first launch (None where unknown)."""
    line = view.reporter.location(fi.node).line if fi.signatures else first_launch(view, fi, enclosing)
    return view.view(constants=dict(view.constants), nonconstant=dict(view.nonconstant)), line


def _bound_then(compiled: ModuleInfo, changing: dict, line) -> ModuleInfo:
    """COMPILED with each of the CHANGING names' straight-line bindings made before LINE, evaluated in order."""
    if line is None:
        return compiled
    for name, history in changing.items():
        before = [node for at, node in history if at < line]
        if not before:
            continue
        reason = compiled.nonconstant[name]
        try:
            for node in before:  # in order: `W = 0.25 * W` reads the binding before it
                compiled.constants[name] = const_eval(compiled, node)
                compiled.nonconstant.pop(name, None)
        except ConstEvalError:
            compiled.constants.pop(name, None)
            compiled.nonconstant[name] = reason
    return compiled


AFTER_IMPORT = 1 << 62  # a line after every line of a module


def launches(node, names) -> list:
    """The launches under NODE of a kernel bound to one of NAMES: `kernel[grid, block](...)`,
    `kernel.forall(n)(...)`."""
    found = []

    class Launches(cst.CSTVisitor):
        def visit_Call(self, call) -> None:
            func = call.func
            target = func.value if isinstance(func, cst.Subscript) else (
                func.func.value if isinstance(func, cst.Call) and isinstance(func.func, cst.Attribute)
                and func.func.attr.value == "forall" else None)
            if isinstance(target, cst.Name) and target.value in names:
                found.append(call)

    node.visit(Launches())
    return found


def first_launch(view, fi: FunctionInfo, enclosing: cst.FunctionDef):
    """The line of the kernel's first launch (`kernel[grid, block](...)`, `kernel.forall(n)(...)`) after its
    definition, where that is certain: a statement that runs unconditionally (the enclosing function's own, or
    inside a `with`). None when the kernel is first mentioned anywhere else (under an if, in a loop, in a nested
    function, passed to a call): it may be launched from there, at a moment the source does not tell."""
    start = view.reporter.location(fi.node).line
    names = {fi.name, fi.node.name.value}

    def mentions(node) -> list:
        found = []

        class Names(cst.CSTVisitor):
            def visit_Name(self, n) -> None:
                if n.value in names:
                    found.append(n)

        node.visit(Names())
        return found

    def scan(statements):
        for stmt in statements:
            if view.reporter.location(stmt).line <= start and not isinstance(stmt, cst.With):
                continue
            if isinstance(stmt, cst.With):
                found = scan(stmt.body.body)
                if found != 0:
                    return found
                continue
            used = mentions(stmt)
            if not used:
                continue
            if isinstance(stmt, cst.SimpleStatementLine) and len(launches(stmt, names)) == len(used):
                return view.reporter.location(stmt).line
            return None
        return 0  # not mentioned

    found = scan(body_of(enclosing) if enclosing is not None else list(view.module.body))
    if found == 0 and enclosing is None:
        # never mentioned at module level after its definition: launched, if at all, once the module has run
        # (by its functions, or by another module), with every module-level binding made
        return AFTER_IMPORT
    return found or None


def publishes_locals(fn: cst.FunctionDef) -> bool:
    """Whether FN's body runs `globals().update(locals())`."""
    for stmt in body_of(fn):
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                call = getattr(small, "value", None)
                if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
                        call.func.attr.value == "update" and isinstance(call.func.value, cst.Call) and \
                        isinstance(call.func.value.func, cst.Name) and call.func.value.func.value == "globals" and \
                        len(call.args) == 1 and isinstance(call.args[0].value, cst.Call) and \
                        isinstance(call.args[0].value.func, cst.Name) and call.args[0].value.func.value == "locals":
                    return True
    return False


def bind_call(info, fn: cst.FunctionDef, call: cst.Call) -> dict | None:
    """{parameter: constant} of a call with constant arguments (defaults included), or None."""
    params = [*fn.params.posonly_params, *fn.params.params]
    values = {}
    try:
        positional = [a for a in call.args if a.keyword is None]
        if any(a.star for a in call.args) or len(positional) > len(params):
            return None
        for p, a in zip(params, positional):
            values[p.name.value] = const_eval(info, a.value)
        for a in call.args:
            if a.keyword is not None:
                values[a.keyword.value] = const_eval(info, a.value)
        for p in params:
            if p.name.value not in values:
                if p.default is None:
                    return None
                values[p.name.value] = const_eval(info, p.default)
    except ConstEvalError:
        return None
    return values


# What may be done to an array without changing it: it is still the constant it was made as.
_READS = {"copy", "astype", "sum", "mean", "max", "min", "reshape", "ravel", "tolist", "copy_to_host", "any", "all",
          "std", "var", "argmax", "argmin", "nonzero", "transpose", "flatten", "view", "item", "prod", "dot",
          "cumsum", "round", "clip", "tobytes"}
_READING_CALLS = ("np.", "numpy.", "cuda.", "numba.cuda.", "len", "print", "range", "float", "int",
                  "str", "repr", "isinstance", "type")
_WRITING_NUMPY = ("np.copyto", "np.put", "np.place", "np.putmask", "np.fill_diagonal", "np.random.shuffle",
                  "numpy.copyto", "numpy.put", "numpy.place", "numpy.putmask", "numpy.random.shuffle")


def array_mutations(info: ModuleInfo, tree, names) -> dict:
    """{name: [lines]} where one of NAMES (arrays) may be changed in place within TREE: an element or slice
    assigned, a method that is not a read, or the array passed to a function that is not known to only read it
    (a kernel launch copies a host array back). Numba bakes an array's values in when the kernel compiles, so
    a change before that is a change numba2cuda must not miss."""
    from .names import resolve

    found: dict = {}

    def note(name, node):
        if name in names:
            found.setdefault(name, []).append(info.reporter.location(node).line)

    def root(node):
        while isinstance(node, (cst.Subscript, cst.Attribute)):
            node = node.value
        return node.value if isinstance(node, cst.Name) else None

    class Finder(cst.CSTVisitor):
        def visit_AssignTarget(self, node) -> None:
            if isinstance(node.target, (cst.Subscript, cst.Attribute)):
                note(root(node.target), node)

        def visit_AugAssign(self, node) -> None:
            if isinstance(node.target, (cst.Subscript, cst.Attribute)):
                note(root(node.target), node)

        def visit_Call(self, node) -> None:
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value not in _READS \
                    and func.value.value in names:
                note(func.value.value, node)
            canon = resolve(info, func) or (func.value if isinstance(func, cst.Name) else "")
            reads = canon.startswith(_READING_CALLS) and not canon.startswith(_WRITING_NUMPY)
            for arg in node.args:
                if isinstance(arg.value, cst.Name) and not reads:
                    note(arg.value.value, node)

    tree.visit(Finder())
    return found
