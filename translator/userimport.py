"""A user's module imported by path as Python imports it: inside its package where it has one, so that its
relative imports (`from .helpers import f`) work. Imports nothing of numba2cuda: verify's reference process loads
this file by path."""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import importlib.util
import os
import sys

MAX_MAGICS = 32


def notebook_magics(source: str) -> tuple[str, list]:
    """SOURCE with the IPython magics Python stops at (`%%writefile k.py`, `%matplotlib inline`, `!pip install
    numba` of a notebook's cells) made comments, and the 1-based lines changed. Only lines the parser points at
    are changed, so a string whose lines start with % is left as it is."""
    changed = []
    while len(changed) < MAX_MAGICS:
        try:
            compile(source, "<magics>", "exec", dont_inherit=True, flags=ast.PyCF_ONLY_AST)
            return source, changed
        except SyntaxError as exc:
            lines = source.splitlines(keepends=True)
            line = exc.lineno or 0
            text = lines[line - 1] if 0 < line <= len(lines) else ""
            if not text.lstrip().startswith(("%", "!")) or line in changed:
                return source, changed
            indent = len(text) - len(text.lstrip())
            lines[line - 1] = text[:indent] + "#" + text[indent:]
            source = "".join(lines)
            changed.append(line)
        except (ValueError, RecursionError, MemoryError):
            return source, changed
    return source, changed


class _NotebookLoader(importlib.machinery.SourceFileLoader):
    """Loads a notebook's cell saved as a file as IPython runs it: its magic lines are not Python."""

    def source_to_code(self, data, path, *, _optimize=-1):
        if isinstance(data, bytes):
            data = importlib.util.decode_source(data)
        return super().source_to_code(notebook_magics(data)[0], path)


def import_path(path: str, name: str | None = None):
    """The module at PATH, executed: `pkg.sub.mod` when its folders are packages (`__init__.py`), else loaded from
    the file under NAME (default: its stem). Its folder (and its top package's parent) go on sys.path first."""
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
    if package and stem != "__init__":
        return importlib.import_module(".".join(package + [stem]))
    name = name or stem
    spec = importlib.util.spec_from_file_location(name, path, loader=_NotebookLoader(name, path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # Triton's JIT, dataclasses and pickling look a module up by its name
    spec.loader.exec_module(module)
    return module
