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

from .version import __version__

__all__ = ["__version__", "load", "translate_file", "translate_source"]


def __getattr__(name):  # PEP 562: `from translator import translate_file` without importing the pipeline up front
    if name in ("load", "translate_file", "translate_source"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'translator' has no attribute {name!r}")
