"""A user's module imported by path as Python imports it: inside its package where it has one, so that its
relative imports (`from .helpers import f`) work. Imports nothing of numba2cuda: verify's reference process loads
this file by path."""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import importlib.machinery
import importlib.util
import io
import os
import re
import sys
import tokenize
import types

MAX_CHANGES = 64

# What these names mean wherever Numba code is written; a star import that numba2cuda cannot read is taken to bring
# them with these meanings (and says so), since a kernel decorated with numba.cuda.jit means nothing else.
CONVENTIONAL_NAMES = {"numba": "numba", "cuda": "numba.cuda", "np": "numpy", "numpy": "numpy", "math": "math",
                      "nb": "numba"}
# What a snippet from docs or a notebook cell means by a name it never imports (`cuda.local.array(3, float32)`).
SNIPPET_NAMES = {**CONVENTIONAL_NAMES, **{t: f"numba.{t}" for t in (
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "complex64", "complex128", "boolean", "void", "intp", "uintp")}}


@functools.lru_cache(maxsize=4)  # read again for each trial translation of a module; callers only read it
def unimported_names(source: str) -> dict:
    """{name: what it conventionally is} of the SNIPPET_NAMES the module uses and never binds anywhere (a code block
    of numba-cuda's docs, a notebook cell whose imports came in an earlier cell)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    used, bound = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return {n: SNIPPET_NAMES[n] for n in sorted(used - bound) if n in SNIPPET_NAMES}


_PRINT = re.compile(r"print\b\s*(?:>>\s*(?P<file>[^,]+?)\s*(?:,|$))?(?P<args>.*?)(?P<comma>,?)\s*$")
_EXEC = re.compile(r"exec\b\s*(?P<code>.+?)(?:\s+in\s+(?P<ns>.+?))?\s*$")
_EXCEPT = re.compile(r"except\s+(?P<types>[^,:]+?)\s*,\s*(?P<name>\w+)\s*:(?P<rest>.*)$")
_RAISE = re.compile(r"raise\s+(?P<type>[\w.]+)\s*,\s*(?P<arg>.+?)\s*$")


def _python3(stmt: str) -> str | None:
    """The Python 3 spelling of the Python 2 statement STMT (one line, its indentation stripped): `print x, y`,
    `print >>f, x`, `exec s in ns`, `except E, e:`, `raise E, "message"`; None for anything else."""
    if m := _PRINT.fullmatch(stmt):
        parts = [m["args"]] if m["args"] else []
        if m["comma"]:
            parts.append('end=" "')  # Python 2's trailing comma: a space, not a new line
        if m["file"]:
            parts.append(f"file={m['file']}")
        return f"print({', '.join(parts)})"
    if m := _EXEC.fullmatch(stmt):
        return f"exec({m['code']}{', ' + m['ns'] if m['ns'] else ''})"
    if m := _EXCEPT.fullmatch(stmt):
        return f"except {m['types']} as {m['name']}:{m['rest']}"
    if m := _RAISE.fullmatch(stmt):
        return f"raise {m['type']}({m['arg']})"
    return None


def comment_starts(code: str) -> list:
    """(row, col) of each comment in CODE, as Python's tokenizer finds them (a '#' in a string is none); where the
    tokenizer stops (an unclosed bracket at the end), those before."""
    found = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.COMMENT:
                found.append(tok.start)
    except (tokenize.TokenError, SyntaxError):
        pass
    return found


def _comment_apart(line: str) -> tuple[str, str]:
    """LINE's code and its trailing comment (with the spaces before it)."""
    starts = comment_starts(line)
    if not starts:
        return line, ""
    code = line[:starts[0][1]].rstrip()
    return code, line[len(code):]


def _alone(stmt: str) -> str:
    """STMT as a module of its own: a clause header gets its body, and `except` its `try`."""
    if stmt.startswith("except"):
        return f"try:\n    pass\n{stmt}\n    pass"
    return f"{stmt}\n    pass" if stmt.rstrip().endswith(":") else stmt


def _compiles(source: str) -> SyntaxError | None:
    try:
        compile(source, "<dialect>", "exec", dont_inherit=True, flags=ast.PyCF_ONLY_AST)
        return None
    except SyntaxError as exc:
        return exc


@functools.lru_cache(maxsize=4)  # the loader asks twice per import (exec_module, then source_to_code)
def python3_source(source: str) -> tuple[str, tuple]:
    """SOURCE as Python 3 reads it where Python stops at a line of another dialect, and the 1-based lines changed.
    A notebook's cell saved as a file: the IPython magics (`%%writefile k.py`, `%matplotlib inline`, `!pip install
    numba`), which IPython runs, are made comments. An old tutorial's Python 2 statements (`print x, y`, `exec s`,
    `except E, e:`, `raise E, "m"`), outside its kernel as a rule, are written as Python 3 spells them. Only
    lines the parser points at are changed, so a string whose lines start with % is left as it is; a line whose
    rewriting does not compile is left too, and the error is Python's."""
    changed = []
    while len(changed) < MAX_CHANGES:
        try:
            if (exc := _compiles(source)) is None:
                return source, tuple(changed)
        except (ValueError, RecursionError, MemoryError):
            return source, tuple(changed)
        lines = source.splitlines(keepends=True)
        line = exc.lineno or 0
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        body = text.lstrip()
        indent = text[:len(text) - len(body)]
        if line in changed or not body:
            return source, tuple(changed)
        if body.startswith(("%", "!")):
            lines[line - 1] = indent + "#" + body
        else:
            code, comment = _comment_apart(body.rstrip("\r\n"))
            fixed = _python3(code)
            if fixed is None or _compiles(_alone(fixed)) is not None:
                return source, tuple(changed)
            lines[line - 1] = indent + fixed + comment + text[len(text.rstrip("\r\n")):]
        source = "".join(lines)
        changed.append(line)
    return source, tuple(changed)


class _NotebookLoader(importlib.machinery.SourceFileLoader):
    """Loads a notebook's cell saved as a file as IPython runs it (its magic lines are not Python), and an old
    tutorial's `print x` lines as Python 3 spells them (python3_source)."""

    def source_to_code(self, data, path, *, _optimize=-1):
        if isinstance(data, bytes):
            data = importlib.util.decode_source(data)
        return super().source_to_code(python3_source(data)[0], path)

    def exec_module(self, module):
        """A snippet that uses cuda, np or float32 without importing them runs with their conventional meaning, as
        numba2cuda reads it (its translation notes each): the cell whose imports came earlier, run after them."""
        try:  # decoded as source_to_code gets it, so the conversion is asked of one string
            source = python3_source(importlib.util.decode_source(self.get_data(self.path)))[0]
        except (OSError, SyntaxError, UnicodeDecodeError):
            source = ""
        for name, qualified in unimported_names(source).items():
            parent, _, attr = qualified.rpartition(".")
            try:
                module.__dict__[name] = importlib.import_module(qualified) if not parent or qualified == \
                    "numba.cuda" else getattr(importlib.import_module(parent), attr)
            except (ImportError, AttributeError):
                pass
        super().exec_module(module)


# what marks a project's root folder: its programs run from there or below, so no import reaches above it
PROJECT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
MAX_ANCESTORS = 6


def project_folders(folder: str) -> list[str]:
    """The folders above FOLDER, nearest first, up to the project's root (the first that holds a .git, a
    pyproject.toml or a setup file) and at most six: where a program of the project may run from, so where its
    plain `import constants` finds a module (Fluid-Simulator's Physics/gpu.py imports the root's constants.py)."""
    folders = []
    here = os.path.abspath(folder)
    if any(os.path.exists(os.path.join(here, m)) for m in PROJECT_MARKERS):
        return folders
    while len(folders) < MAX_ANCESTORS and os.path.dirname(here) != here:
        here = os.path.dirname(here)
        folders.append(here)
        if any(os.path.exists(os.path.join(here, m)) for m in PROJECT_MARKERS):
            break
    return folders


@functools.lru_cache(maxsize=1)
def _library_folders() -> frozenset:
    import sysconfig

    return frozenset(os.path.realpath(p) for k, p in sysconfig.get_paths().items()
                     if k in ("stdlib", "platstdlib", "purelib", "platlib"))


def is_library_path(path: str) -> bool:
    """Whether PATH (real) is an installed library's or the standard library's, not a project's own."""
    return "site-packages" in path or "dist-packages" in path or any(
        path == lib or path.startswith(lib + os.sep) for lib in _library_folders())


def project_path_entries() -> list[str]:
    """The folders PYTHONPATH adds that hold a project's own modules: not an installed library's (site-packages, the
    standard library), which a child process of numba2cuda gets on its PYTHONPATH too."""
    reals = (os.path.realpath(e) for e in os.environ.get("PYTHONPATH", "").split(os.pathsep) if e)
    return [real for real in reals if not is_library_path(real)]


#: the package a module's folder is made where it has no __init__.py and the module imports relatively
FOLDER_PACKAGE = "n2c_folder"


def folder_package(folder: str) -> str:
    """A package of FOLDER for a module there that imports relatively (`from .extensions_usecases import ...` in a
    test file copied out of numba-cuda's test package): its siblings are found as Python finds a package's, and one
    that is missing is stood in for (frontend/standins.py), so the module imports as it does in its package."""
    name = f"{FOLDER_PACKAGE}_{hashlib.sha1(folder.encode()).hexdigest()[:12]}"  # one per folder
    if name not in sys.modules:
        package = types.ModuleType(name)
        package.__path__ = [folder]
        sys.modules[name] = package
    return name


def folder_sibling(module: str) -> str | None:
    """`.extensions_usecases` for a module of a folder package (folder_package), else None."""
    head, dot, rest = module.partition(".")
    return "." + rest.split(".")[0] if dot and head.startswith(FOLDER_PACKAGE + "_") else None


def _imports_relatively(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return re.search(r"^[ \t]*from[ \t]+\.", f.read(), re.M) is not None
    except OSError:
        return False


def import_path(path: str, name: str | None = None):
    """The module at PATH, executed: `pkg.sub.mod` when its folders are packages (`__init__.py`), else loaded from
    the file under NAME (default: its stem). Its folder (and its top package's parent) go on sys.path first, the
folders above it up to the project's root last."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    package = []
    top = folder
    while os.path.isfile(os.path.join(top, "__init__.py")) and os.path.dirname(top) != top:
        package.insert(0, os.path.basename(top))
        top = os.path.dirname(top)
    for entry in (folder, top):  # the top package's parent first, wherever they already were: from the
        if entry in sys.path:      # package's own folder, `randium_2d_gpu` is its module of that name
            sys.path.remove(entry)
        sys.path.insert(0, entry)
    for entry in project_folders(folder):  # last: a module of the project's root that only its programs' folder
        if entry not in sys.path:          # gives (`import constants` from a sub-folder)
            sys.path.append(entry)
    if package and stem != "__init__":
        return importlib.import_module(".".join(package + [stem]))
    name = name or stem
    if _imports_relatively(path):
        name = f"{folder_package(folder)}.{stem}"
    spec = importlib.util.spec_from_file_location(name, path, loader=_NotebookLoader(name, path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # Triton's JIT, dataclasses and pickling look a module up by its name
    spec.loader.exec_module(module)
    return module
