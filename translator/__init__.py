"""numba2cuda: Numba CUDA kernels -> readable, specialised CUDA C.

The pipeline, one subpackage per stage, in the order data flows (each imports only from those before it):

    frontend/  numba source -> untyped KernelIR          (ir/: the IR, its types and facts)
    analysis/  untyped KernelIR -> typed KernelIR and facts (types, bounds, tile widths, calls, limits)
    lower/     typed KernelIR -> C-ready Program          (legalize, declarations; the translation's options)
    emit/      Program -> .cu text, binding .cpp, IR dump
    build/     .cu + .cpp -> cached, importable extension
    runtime/   built kernels -> launches (drop-in launcher, CPU runtime)
    verify/    module + translation -> equivalence verdict
    llm/       kernels the rules reject -> a model's verified translation; translate and build commands
    bench/     module + translation -> GPU timings
    package/   module -> pip-installable project

api.py is the public Python API, cli.py the command line; errors.py, atomic.py, sandbox.py and stack.py sit below
every stage. Importing this package imports nothing but the version: the public names load on first use.
"""

import os as _os
import sys as _sys


def _drop_working_folder() -> None:
    """`python -m translator.cli` (or `-m numba2cuda`) run in a kernel's folder puts that folder first on sys.path,
    so a project file named like a standard module (pyxem's utils/signal.py) would shadow it when numba2cuda
    imports subprocess. numba2cuda reads the user's files by path and never imports them from the working folder:
    the folder is dropped while -m is still locating this package, unless numba2cuda itself lives there."""
    if not (_sys.argv and _sys.argv[0] == "-m" and _sys.path and not _sys.flags.safe_path):
        return
    first = _os.path.abspath(_sys.path[0] or _os.curdir)
    home = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
    if first == _os.path.abspath(_os.curdir) and first != home:
        del _sys.path[0]


_drop_working_folder()

from .version import __version__  # noqa: E402

__all__ = ["__version__", "load", "translate_file", "translate_source"]


def __getattr__(name):  # PEP 562: `from translator import translate_file` without importing the pipeline up front
    if name in ("load", "translate_file", "translate_source"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'translator' has no attribute {name!r}")
