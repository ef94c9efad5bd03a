"""numba source -> ModuleInfo: kernels, device functions, import spellings and module constants (libcst; never executed)."""

from __future__ import annotations

import re
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..ir import typesys as T
from .constants import ConstEvalError, const_eval
from .names import dotted, resolve
from ..errors import Diagnostic, Location, Reporter, Unsupported, UserError
from ..stack import deep_stack
from .guard import check_source, decode_source
from .info import FunctionInfo, ModuleInfo

JIT_NAMES = {"cuda.jit"}
KNOWN_JIT_OPTIONS = {"device", "fastmath", "lineinfo", "debug", "inline", "forceinline", "opt", "cache",
                     "max_registers", "boundscheck"}


# --------------------------------------------------------------------------- imports and constants

def _collect_imports(info: ModuleInfo, body) -> None:
    for stmt in body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    full = dotted(alias.name)
                    if alias.asname:
                        info.aliases[alias.asname.name.value] = full
                    else:
                        head = full.split(".")[0]
                        info.aliases[head] = head
            elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
                mod = dotted(small.module)
                if isinstance(small.names, cst.ImportStar):
                    continue
                for alias in small.names:
                    name = alias.name.value
                    local = alias.asname.name.value if alias.asname else name
                    info.aliases[local] = f"{mod}.{name}"


def _why_not_constant(node) -> str:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return "is a string; kernels have no strings"
    if isinstance(node, cst.Call):
        return "is computed when the module runs (by a call), and numba2cuda does not run the module"
    if isinstance(node, cst.List):
        return "is a Python list, and Numba rejects a global list in a kernel (write a tuple: (1, 2, 3))"
    if isinstance(node, (cst.Dict, cst.Set)):
        return "is a Python container; kernels cannot use lists, dicts or sets"
    return "is not a constant numba2cuda can evaluate without running the module"


def _collect_constants(info: ModuleInfo, body) -> None:
    counts: dict[str, int] = {}
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                targets = []
                if isinstance(small, cst.Assign):
                    targets = [t.target for t in small.targets]
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                    targets = [small.target]
                for t in targets:
                    if isinstance(t, cst.Name):
                        counts[t.value] = counts.get(t.value, 0) + 1
    for stmt in body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                name = small.targets[0].target.value
                if counts.get(name) != 1:
                    info.nonconstant[name] = "is assigned more than once at module level, so its value is unknown"
                    continue
                try:
                    info.constants[name] = const_eval(info, small.value)
                    info.constant_nodes[name] = small
                except ConstEvalError:
                    info.nonconstant[name] = _why_not_constant(small.value)


TYPES_DECLARATION = "NUMBA2CUDA_TYPES"


def _collect_declared_types(info: ModuleInfo, body) -> None:
    """NUMBA2CUDA_TYPES = {"kernel": "m=float32[:, ::1], tw=int64"}: types for kernels written, as in the
    lecture, without a signature (Numba learns them at the first launch; numba2cuda cannot run the module)."""
    for stmt in body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)
                    and small.targets[0].target.value == TYPES_DECLARATION):
                continue
            info.nonconstant.pop(TYPES_DECLARATION, None)
            before = len(info.reporter.diagnostics)
            hint = (f'write {TYPES_DECLARATION} = {{"kernel_name": "m=float32[:, ::1], tw=int64"}} '
                    "(a dict literal of string literals)")
            if not isinstance(small.value, cst.Dict):
                info.reporter.add(small.value, TYPES_DECLARATION, "must be a dict literal", hint)
                info.declared_types_broken = True
                continue
            for element in small.value.elements:
                key = getattr(element, "key", None)
                value = getattr(element, "value", None)
                if not (isinstance(key, cst.SimpleString) and isinstance(value, cst.SimpleString)):
                    info.reporter.add(element.value if value is not None else small.value, TYPES_DECLARATION,
                                      "entries must be string literals", hint)
                    continue
                info.declared_type_nodes[key.evaluated_value] = key
                try:
                    info.declared_types[key.evaluated_value] = T.parse_types_option(value.evaluated_value)
                except T.TypeStringError as exc:
                    info.reporter.add(value, TYPES_DECLARATION, str(exc), hint)
            info.declared_types_broken |= len(info.reporter.diagnostics) > before


# --------------------------------------------------------------------------- decorators

def _jit_decorator(info: ModuleInfo, dec: cst.Decorator):
    """(positional args, keyword args) of a @cuda.jit decorator, or None if it is something else."""
    expr = dec.decorator
    call = expr if isinstance(expr, cst.Call) else None
    target = call.func if call else expr
    if resolve(info, target) not in JIT_NAMES:
        return None
    if call is None:
        return [], {}
    return [a.value for a in call.args if a.keyword is None], {a.keyword.value: a.value for a in call.args if a.keyword}


_QUALIFIER_RE = re.compile(r"\b(?:numba\.cuda|numba\.types|numba|nb|cuda|types|np|numpy)\.")


def type_text(info: ModuleInfo, node) -> str:
    """Source text of a type written as an expression (`nb.float32[:, ::1]`) or a string, unqualified."""
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    if isinstance(node, cst.ConcatenatedString):
        return node.evaluated_value
    return _QUALIFIER_RE.sub("", info.code(node))


def _read_signature(info: ModuleInfo, node, fn_node):
    if isinstance(node, (cst.List, cst.Tuple)):
        if len(node.elements) != 1:
            raise Unsupported(node, "several signatures", "numba2cuda translates one signature per kernel",
                              "keep one signature, or remove them and pass --types")
        node = node.elements[0].value
    try:
        return T.parse_signature(type_text(info, node))
    except T.TypeStringError as exc:
        raise Unsupported(node, "signature", str(exc), "write Numba's spelling, e.g. 'void(float32[:, ::1], int32)'") from None


def _bool_option(node) -> bool | None:
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


def _function_info(info: ModuleInfo, fn: cst.FunctionDef, enclosing) -> FunctionInfo | None:
    jit = None
    for dec in fn.decorators:
        jit = _jit_decorator(info, dec)
        if jit is not None:
            break
    if jit is None:
        return None
    if fn.asynchronous is not None:
        raise Unsupported(fn, "async def", "kernels and device functions cannot be coroutines", "write a plain def")
    args, kwargs = jit
    options = {}
    for key, value in kwargs.items():
        if key not in KNOWN_JIT_OPTIONS:
            raise Unsupported(value, f"@cuda.jit option '{key}'", "this option is not understood by numba2cuda",
                              "remove it, or use one of: " + ", ".join(sorted(KNOWN_JIT_OPTIONS)))
        flag = _bool_option(value)
        options[key] = flag if flag is not None else info.code(value)
    is_device = options.get("device") is True
    signature = _read_signature(info, args[0], fn) if args else None
    params_node = fn.params
    if params_node.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params_node.star_kwarg or params_node.kwonly_params:
        raise Unsupported(fn.name, "*args/**kwargs", "kernels take a fixed list of positional parameters")
    params = [p.name.value for p in params_node.posonly_params] + [p.name.value for p in params_node.params]
    for p in list(params_node.params):
        if p.default is not None:
            raise Unsupported(p, "default parameter value", "kernels and device functions cannot have defaults",
                              "pass the value explicitly at every call")
    annotations = {}
    for p in list(params_node.posonly_params) + list(params_node.params):
        if p.annotation is not None:
            try:
                annotations[p.name.value] = T.parse_type(type_text(info, p.annotation.annotation))
            except T.TypeStringError as exc:
                raise Unsupported(p.annotation, "type annotation", str(exc)) from None
    if signature is not None and len(signature[1]) != len(params):
        raise Unsupported(args[0], "signature", f"has {len(signature[1])} argument types for {len(params)} parameters")
    if signature is not None and not is_device and signature[0] not in (None, T.VOID):
        raise Unsupported(args[0], "signature", "a kernel must return void", "use 'void(...)'")
    return FunctionInfo(fn.name.value, fn, is_device, params, signature, annotations, options, enclosing)


def _walk_functions(info: ModuleInfo, body, enclosing=None):
    for stmt in body:
        if isinstance(stmt, cst.FunctionDef):
            try:
                fi = _function_info(info, stmt, enclosing)
            except Unsupported as exc:
                info.reporter.add_unsupported(exc)
                info.failed_functions.add(stmt.name.value)
                fi = None
            if fi is not None:
                if fi.name in info.functions:
                    info.reporter.add(stmt.name, f"function '{fi.name}'", "is defined twice",
                                      "give each kernel a distinct name")
                info.functions[fi.name] = fi
            elif isinstance(stmt.body, cst.IndentedBlock):
                _walk_functions(info, stmt.body.body, stmt)
        elif isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
            _walk_functions(info, stmt.body.body, enclosing)
        elif isinstance(stmt, (cst.If, cst.With, cst.Try)) and isinstance(getattr(stmt, "body", None), cst.IndentedBlock):
            _walk_functions(info, stmt.body.body, enclosing)


# --------------------------------------------------------------------------- entry

@deep_stack
def parse_source(source: str, path: str) -> ModuleInfo:
    lines = source.splitlines()
    check_source(source, path)  # before libcst: it crashes on nesting CPython refuses, and slows with size
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:  # Python reads it (check_source said so): libcst's own limit
        lineno, col = exc.raw_line, max(exc.raw_column, 0)
        line = lines[lineno - 1] if 0 < lineno <= len(lines) else ""
        diag = Diagnostic(Location(path, lineno, col), "statement numba2cuda cannot read",
                          f"Python accepts it, but libcst, the parser numba2cuda reads modules with, stops here "
                          f"({exc.message.splitlines()[0] if exc.message else 'parse error'})",
                          "write the statement more simply (fewer adjacent strings, shorter chains)", line)
        raise UserError([diag]) from None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    info = ModuleInfo(path, source, module, Reporter(path, lines, positions))
    _collect_imports(info, module.body)
    _collect_constants(info, module.body)
    _collect_declared_types(info, module.body)
    _walk_functions(info, module.body)
    for kernel, node in info.declared_type_nodes.items():
        if kernel not in info.functions and kernel not in info.failed_functions:
            info.reporter.add(node, TYPES_DECLARATION, f"names {kernel!r}, which is not a @cuda.jit function here",
                              "use the kernel's name as the key")
    return info


def parse_file(path: str | Path) -> ModuleInfo:
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{path}: error: no such file") from None
    except OSError as exc:  # a directory, no permission: the user's to fix, not a crash
        raise UserError(f"{path}: error: cannot read it ({exc.strerror or exc})") from None
    return parse_source(decode_source(data, str(path)), str(path))
