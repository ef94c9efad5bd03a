"""A debugger stop in a kernel -> nothing: numba-cuda's simulator docs put `from pdb import set_trace;
set_trace()` in a kernel, which the simulator runs in Python; compiled CUDA has no such stop, so the translation
drops it with a note (mixed into the function lowerer)."""

from __future__ import annotations

import libcst as cst

DEBUGGERS = ("pdb", "ipdb")


class DebuggerStatements:
    """Needs, from the class it is mixed into: info, scope, debugger_names."""

    def debugger_import(self, small) -> bool:
        """`from pdb import set_trace` inside a kernel (numba-cuda's simulator docs): the debugger's names."""
        if isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative and \
                self.info.code(small.module) in DEBUGGERS and not isinstance(small.names, cst.ImportStar):
            self.debugger_names |= {(a.asname.name if a.asname else a.name).value for a in small.names}
            return True
        if isinstance(small, cst.Import) and all(self.info.code(a.name) in DEBUGGERS for a in small.names):
            self.debugger_names |= {(a.asname.name if a.asname else a.name).value for a in small.names}
            return True
        return False

    def is_breakpoint(self, func) -> bool:
        """set_trace() of a debugger imported in the kernel, pdb.set_trace(), or breakpoint()."""
        head = func.value if isinstance(func, cst.Attribute) else func
        return isinstance(head, cst.Name) and (head.value in self.debugger_names or isinstance(func, cst.Name)
                                               and func.value == "breakpoint" and "breakpoint" not in self.scope)
