"""A user's module imported by path as Python imports it: inside its package where it has one, so that its
relative imports (`from .helpers import f`) work. Imports nothing of numba2cuda: verify's reference process loads
this file by path."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys


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
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # Triton's JIT, dataclasses and pickling look a module up by its name
    spec.loader.exec_module(module)
    return module
