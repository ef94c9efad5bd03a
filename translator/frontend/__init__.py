"""numba source -> ModuleInfo and untyped KernelIR, read with libcst and never executed.

module.py finds the kernels, device functions, imports and module constants (names.py: import
spellings; constants.py: constant values; scan.py: facts about a function's syntax); stmt.py, expr.py,
call.py and assign.py lower a function's body to untyped KernelIR (the typer runs next)."""

from .info import FunctionInfo, ModuleInfo
from .module import parse_file, parse_source

__all__ = ["FunctionInfo", "ModuleInfo", "parse_file", "parse_source"]
