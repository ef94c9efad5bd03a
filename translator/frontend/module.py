"""numba source -> ModuleInfo: kernels, device functions, import spellings and module constants (libcst; never executed)."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..ir import typesys as T
from .bindings import Binder
from .closures import array_mutations
from .constants import ConstArray, DeviceArray
from .decorators import function_info, jit_parts
from .discover import Discoverer
from .dtypes import record_spellings
from .importmode import apply_globals, apply_kernels, run_import
from .inner import device_array_reads
from .scan import assignment_counts, find_nodes
from ..userimport import (CONVENTIONAL_NAMES, SNIPPET_NAMES, project_folders, project_path_entries, python3_source,
                          unimported_names)
from ..errors import Diagnostic, Location, Reporter, UserError
from ..stack import deep_stack
from .guard import check_source, decode_source
from .info import FunctionInfo, ModuleInfo
from .jitoptions import KNOWN_JIT_OPTIONS, type_text
from .scan import NameReads, names_bound_anywhere

__all__ = ["FunctionInfo", "ModuleInfo", "KNOWN_JIT_OPTIONS", "parse_file", "parse_source", "reparse", "type_text"]

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
                    info.declared_types[key.evaluated_value] = T.parse_types_option(value.evaluated_value,
                                                                                    record_spellings(info))
                except T.TypeStringError as exc:
                    info.reporter.add(value, TYPES_DECLARATION, str(exc), hint)
            info.declared_types_broken |= len(info.reporter.diagnostics) > before


# --------------------------------------------------------------------------- entry

def _expand_indent_tabs(source: str) -> str:
    """SOURCE with the tabs of each line's indentation expanded as CPython's tokenizer counts them (to the next
    multiple of 8): libcst refuses indentation that mixes tabs and spaces, which CPython accepts."""
    out = []
    for line in source.splitlines(keepends=True):
        body = line.lstrip(" \t")
        out.append(line[:len(line) - len(body)].expandtabs(8) + body)
    return "".join(out)


@functools.lru_cache(maxsize=4)  # pure, and read again for each trial translation of the module
def checked_source(source: str, path: str) -> tuple[str, tuple]:
    """(SOURCE, []) where Python compiles it (guard.check_source), else, for a notebook's cell saved as a file or
    an old tutorial's Python 2 lines, SOURCE as Python 3 reads it and the lines changed (userimport.python3_source);
    anything else is the UserError it was."""
    try:
        check_source(source, path)
        return source, ()
    except UserError:
        fixed, changed = python3_source(source)
        if not changed:
            raise
    check_source(fixed, path)
    return fixed, changed


@deep_stack
def parse_source(source: str, path: str, _siblings: dict | None = None, imported=None) -> ModuleInfo:
    """The module's kernels, device functions and names, read from SOURCE. IMPORTED: what importing it gave
    (frontend.importmode.run_import), whose values override what the source alone tells."""
    original = source.splitlines()
    source, changed = checked_source(source, path)  # before libcst: it crashes on nesting CPython refuses
    lines = source.splitlines()
    try:
        module, positions = _parsed(source)
    except cst.ParserSyntaxError as exc:  # Python reads it (check_source said so): libcst's own limit
        expanded = _expand_indent_tabs(source)
        if expanded != source:  # indentation mixing tabs and spaces, which CPython reads with 8-column tabs
            return parse_source(expanded, path, _siblings, imported)
        lineno, col = exc.raw_line, max(exc.raw_column, 0)
        line = lines[lineno - 1] if 0 < lineno <= len(lines) else ""
        diag = Diagnostic(Location(path, lineno, col), "statement numba2cuda cannot read",
                          f"Python accepts it, but libcst, the parser numba2cuda reads modules with, stops here "
                          f"({exc.message.splitlines()[0] if exc.message else 'parse error'})",
                          "write the statement more simply (fewer adjacent strings, shorter chains)", line)
        raise UserError([diag]) from None
    info = ModuleInfo(path, source, module, Reporter(path, lines, positions))
    for line in changed:  # said where the translation begins, as a note
        text, now = original[line - 1], lines[line - 1].strip()
        where = Location(path, line, len(text) - len(text.lstrip()))
        if now.startswith("#"):
            info.notices.append(Diagnostic(where, "IPython magic",
                                           f"'{text.strip()}' is a notebook's line for IPython, which runs it; "
                                           "Python cannot import this file, and numba2cuda reads the line as a "
                                           "comment", source_line=text))
        else:
            first = not any(n.construct == "Python 2 statement" for n in info.notices)
            info.notices.append(Diagnostic(where, "Python 2 statement",
                                           f"'{text.strip()}' is Python 2, which Numba no longer runs; numba2cuda "
                                           f"reads it as '{now}'" + (", and the whole file as Python 3 (`/` of two "
                                           "integers is a float division)" if first else ""), source_line=text))
    sibling = _SiblingLoader(path, {} if _siblings is None else _siblings)
    Binder(info, None, sibling).run(module.body)
    _note_rebound_globals(info)
    _mutated_arrays(info)
    if info.star_imports:
        _assume_conventional_names(info)
    else:
        _assume_snippet_names(info)
    _assume_project_names(info)
    info.imported = imported
    if imported is not None:
        apply_globals(info, imported)
    _collect_declared_types(info, module.body)
    Discoverer(info, sibling).run()
    if imported is not None:
        apply_kernels(info, imported, _imported_function, sibling.file, sibling.text)
    devices, kernels = device_array_reads(info.functions, info)
    for key, names in devices.items():  # each passed down from the kernel, which takes it from its launcher
        fi = info.functions[key]
        fi.captured = tuple(fi.captured) + names
        fi.device_arrays = names
        fi.params = fi.params + list(names)
    for key, passed in kernels.items():
        scope = info.functions[key].scope or info
        for name, value in passed.items():
            if not isinstance(scope.constants.get(name), DeviceArray):
                scope.constants[name] = value
                scope.nonconstant.pop(name, None)
    names = {fi.name for fi in info.functions.values()}
    for kernel, node in info.declared_type_nodes.items():
        if kernel not in names and kernel not in info.failed_functions:
            info.reporter.add(node, TYPES_DECLARATION, f"names {kernel!r}, which is not a @cuda.jit function here",
                              "use the kernel's name as the key")
    return info


@functools.lru_cache(maxsize=4)
def _parsed(source: str):
    """(libcst module, its node positions): both read-only, so the fresh ModuleInfo of every trial translation of a
    module (one per kernel where the rules reject some) shares one parse of it."""
    module = cst.parse_module(source)
    return module, MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


def _mutated_arrays(info: ModuleInfo) -> None:
    """A module array that the module may change in place is not a constant: Numba bakes in the values it has
    when the kernel compiles, which the source does not tell."""
    arrays = {n for n, v in info.constants.items() if isinstance(v, ConstArray)}
    for name, lines in (array_mutations(info, info.module, arrays) if arrays else {}).items():
        del info.constants[name]
        info.nonconstant[name] = (f"is a NumPy array changed in place (line {min(lines)}); Numba bakes in its values "
                                  "when the kernel compiles, which numba2cuda cannot tell from the source")
        info.needs_run.add(name)


def _assume_conventional_names(info: ModuleInfo) -> None:
    used = {n.value for n in _names_in(info.module)}
    star = next((small for stmt in info.module.body if isinstance(stmt, cst.SimpleStatementLine)
                 for small in stmt.body if isinstance(small, cst.ImportFrom)
                 and isinstance(small.names, cst.ImportStar)), None)
    for name, qualified in CONVENTIONAL_NAMES.items():
        if name in used and name not in info.aliases and name not in info.constants and \
                name not in info.nonconstant and name not in info.value_nodes:
            info.aliases[name] = qualified
            info.notices.append(info.reporter.make(star, f"'{name}'", f"taken to be {qualified}: this module does "
                                                   f"not import it, and `from {info.star_imports[0]} import *` "
                                                   "cannot be read without running it"))


def _assume_project_names(info: ModuleInfo) -> None:
    """`from cubie.cuda_simsafe import cuda, int32`: a project module that picks its `cuda` (numba's, or a simulator's
    by an environment variable) and Numba's types, or re-exports them, where numba2cuda cannot read which: not found
    here, or bound on branches. Kernels mean Numba's by them (Numba compiles nothing else): read so, with a note."""
    for name, conventional in SNIPPET_NAMES.items():
        qualified = info.aliases.get(name)
        reason = info.nonconstant.get(name, "")
        if qualified is not None and qualified.endswith(f".{name}") and qualified != conventional:
            module = qualified[:-len(name) - 1]
            try:
                if importlib.util.find_spec(module.split(".", 1)[0]) is not None:
                    continue
            except (ImportError, ValueError):
                pass
            why = f"it comes from {module}, which numba2cuda cannot find (not next to this file)"
        elif reason.startswith("(imported from ") and "is set under" in reason:
            why = f"it comes from {reason[len('(imported from '):reason.index(')')]}, which chooses it when it runs"
        else:
            continue
        node = next(iter(find_nodes(info.module, lambda n: isinstance(n, cst.ImportAlias) and (
            n.evaluated_alias or n.evaluated_name) == name, first=True)), None)  # noqa: B023 - used at once
        info.nonconstant.pop(name, None)
        info.needs_run.discard(name)
        info.aliases[name] = conventional
        info.notices.append(info.reporter.make(node, f"'{name}'", f"taken to be {conventional}: {why}; in a Numba "
                                               "kernel it means nothing else"))


def _assume_snippet_names(info: ModuleInfo) -> None:
    """A file that uses cuda, np or math without importing them anywhere (a code block of numba-cuda's docs, a
    notebook cell whose imports came in an earlier cell): read with their conventional meaning, with a note, since
    the kernel means nothing else; Python itself would stop at the first use with a NameError."""
    if not unimported_names(info.source):  # CPython's tree says so in a fraction of libcst's walk
        return
    conventional = SNIPPET_NAMES
    uses = {}

    class Reads(NameReads):  # `numba.cuda.jit` reads numba, not a variable cuda
        def visit_Import(self, node) -> bool:
            return False

        def visit_ImportFrom(self, node) -> bool:
            return False

        def visit_Name(self, node) -> None:
            if node.value in conventional:
                uses.setdefault(node.value, node)

    info.module.visit(Reads())
    # a name a star import of a module next to it brought (`from model_numba.Layers.init import *`) is bound
    missing = set(uses) - names_bound_anywhere(info.module) - set(info.aliases)
    for name in sorted(missing, key=lambda m: info.reporter.location(uses[m]).line):
        info.aliases[name] = conventional[name]
        module, _, attr = conventional[name].rpartition(".")
        spelt = (f"import {attr}" if name == attr else f"import {attr} as {name}") if not module else \
            f"from {module} import {attr}" if name == attr else f"import {conventional[name]} as {name}"
        info.notices.append(info.reporter.make(uses[name], f"'{name}'", f"taken to be {conventional[name]}: this "
                                               f"file never imports it (a snippet whose imports are elsewhere); add "
                                               f"`{spelt}` to run it"))


def _names_in(node) -> list:
    found = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, n) -> None:
            found.append(n)

        def visit_Import(self, n) -> bool:  # `import numpy as np` uses np, not numpy
            return False

        def visit_ImportFrom(self, n) -> bool:
            return False

    node.visit(Names())
    return found


def _note_rebound_globals(info: ModuleInfo) -> None:
    """A constant a function rebinds (`global TIME_PADDING` in a detector simulation's load_properties(), which
    reads a configuration file): Numba reads the value it holds when a kernel is compiled, so the translation's
    value is the one the module gives it unless that function ran first; told where a kernel reads it."""
    if "global" not in info.source:  # no declaration to find: skip walking every function
        return
    for fn in find_nodes(info.module, lambda n: isinstance(n, cst.FunctionDef)):
        declared = {n.name.value: g for g in find_nodes(fn, lambda n: isinstance(n, cst.Global)) for n in g.names}
        if not declared:
            continue
        for name in sorted(set(declared) & set(assignment_counts(fn))):
            if name in info.constants and name not in info.value_notes:
                value = info.constants[name]
                shown = f", {value!r}" if isinstance(value, (bool, int, float, complex)) else ""
                info.value_notes[name] = info.reporter.make(
                    declared[name], f"'{name}'", f"{fn.name.value}() rebinds it (global {name}); Numba reads the "
                    "value it holds when the kernel is compiled, and the translation has the value the module "
                    f"gives it{shown}: pass it as a kernel argument if that function runs first")


# modules numba2cuda knows as libraries (names.KNOWN_MODULES spelled as imported): never read as a project's module
LIBRARIES = frozenset(("numba", "numpy", "math", "cmath", "operator", "builtins", "scipy", "cupy", "torch"))


class _SiblingLoader:
    """`from params import N`, `from .params import N`, `import params`: constants of a module next to the file
    (or up the package), read the same way: parsed, never run. Each is read once per translation."""

    # a bound on the cost (a file parses in tens of milliseconds): a package whose __init__ imports all its modules
    # (PhantomGaze's) is read whole by one `from pkg import X`, and 16 files starved the kernel's own helpers
    MAX_FILES = 64

    def __init__(self, path: str, cache: dict):
        self.base = Path(path).resolve().parent if path and not path.startswith("<") else None
        self.cache = cache

    def file(self, path: str):
        """The module at PATH (a file the import mode found a device function in), read once, or None."""
        if len(self.cache) > self.MAX_FILES:
            return None
        if path not in self.cache:
            self.cache[path] = None  # an import cycle reads nothing
            try:
                self.cache[path] = _as_foreign(parse_source(Path(path).read_text(encoding="utf-8"), path, self.cache))
            except (UserError, UnicodeDecodeError, OSError, RecursionError):
                self.cache[path] = None
        return self.cache[path]

    def text(self, source: str, path: str):
        """SOURCE (a string exec() ran, which made a kernel) read as the module PATH names, once, or None."""
        if path not in self.cache:
            self.cache[path] = None
            try:
                self.cache[path] = _as_foreign(parse_source(source, path, self.cache))
            except (UserError, RecursionError):
                self.cache[path] = None
        return self.cache[path]

    def __call__(self, module: str, level: int):
        if self.base is None or len(self.cache) > self.MAX_FILES:
            return None
        if level == 0 and module.split(".", 1)[0] in LIBRARIES:  # `from numba import cuda`: never a project's
            return None
        roots = [self.base]
        for _ in range(max(level - 1, 0)):
            roots = [roots[0].parent]
        parts = module.split(".") if module else []
        if level == 0:  # absolute: next to the file (run as a script), or beside its top-level package
            top = self.base
            while (top / "__init__.py").is_file() and top.parent != top:
                top = top.parent
            roots.append(top)
            # else a project run from a folder above (its root): `from model_numba.Layers.init import *`, whose
            # folders need no __init__.py (namespace packages), `import constants` of the root's constants.py
            roots += [Path(f) for f in project_folders(str(self.base))]
            # and the folders PYTHONPATH adds, where a project's programs run with it set (PyGenAlg's pp.bat)
            roots += [Path(f) for f in project_path_entries()]
        candidates = [c for root in roots for c in (root.joinpath(*parts).with_suffix(".py") if parts else None,
                                                     root.joinpath(*parts, "__init__.py"))]
        for candidate in candidates:
            if candidate is None or not candidate.is_file():
                continue
            return self.file(str(candidate))
        return None


def _as_foreign(info: ModuleInfo) -> ModuleInfo:
    """A sibling module's functions as another module's translation sees them: keyed by their file (a name may
    be the importer's too) and lowered in their own module's names."""
    for fi in {id(f): f for f in info.functions.values()}.values():
        if fi.scope is None or fi.scope.path == info.path:  # not one it imported itself
            fi.key = f"{info.path}:{fi.key}"
            fi.scope = fi.scope or info
    return info


def _imported_function(view, node, is_device, key, name, recorded=False) -> FunctionInfo:
    """A function the import made a dispatcher of, read from its source; when the run did not record how
    cuda.jit was called, its decorator (if cuda.jit's) says."""
    jit = ([], {}) if recorded else next((j for j in (jit_parts(view, d.decorator) for d in node.decorators)
                                           if j is not None), ([], {}))
    args, kwargs = jit
    if is_device:
        kwargs = {**kwargs, "device": cst.Name("True")}
    return function_info(view, node, (args, kwargs), None, key, name)


def reparse(info: ModuleInfo) -> ModuleInfo:
    """A fresh ModuleInfo of the same module (a new reporter), with what its import gave, if anything."""
    return parse_source(info.source, info.path, imported=info.module_info.imported)


def parse_file(path: str | Path, import_module: str | None = None, want=None) -> ModuleInfo:
    """The module at PATH, read from its source; IMPORT_MODULE ("sim" or "gpu"): also imported in a child
    process, and its kernels' free names resolved from what that run gives (frontend/importmode.py). WANT (the
    command's options): the kernels --kernel names and the types --types gives, which the run looks for."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{path}: error: no such file") from None
    except OSError as exc:  # a directory, no permission: the user's to fix, not a crash
        raise UserError(f"{path}: error: cannot read it ({exc.strerror or exc})") from None
    source = decode_source(data, str(path))
    imported = failed = None
    if import_module:
        checked_source(source, str(path))  # a module Python cannot compile is reported where it is, never run
        try:
            imported = run_import(p, import_module, getattr(want, "kernels", None), getattr(want, "types", None))
        except UserError as exc:  # the source may tell enough without it: said in a note, which errors keep
            failed = exc
    info = parse_source(source, str(path), imported=imported)
    if failed is not None:
        why = failed.diagnostics[0]
        note = Diagnostic(why.loc, "--import-module", f"{why.message}; numba2cuda read the source only")
        info.notices.insert(0, note)
        info.reporter.notes.append(note)
        info.import_failed = note
    return info
