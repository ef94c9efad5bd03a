"""`raise` and `assert` in a kernel or device function -> the thread's end. Numba compiles a raise (and a failed
assert) as a return with an exception status, which each caller returns on in turn, up to the kernel; without
debug=True nothing reads that status, so the thread simply stops there while the launch goes on (numba-cuda's
docs: they "only have an effect when debug=True", the effect being the host's exception). With debug=True the host
would see the exception; the translation cannot raise one, and says so (mixed into the function lowerer)."""

from __future__ import annotations

import libcst as cst

from ..ir import intrinsics
from ..ir import nodes as ir


class RaiseLowerer:
    """Needs, from the class it is mixed into: info, fn, expr()."""

    def raise_or_assert(self, small) -> list | None:
        """The thread's end for a raise (or a failed assert) in a kernel or device function; None for any other
        statement."""
        if not isinstance(small, (cst.Raise, cst.Assert)):
            return None
        kind = "raise" if isinstance(small, cst.Raise) else "assert"
        host = ("; with debug=True Numba also raises it on the host, which the translation does not"
                if self.fn.options.get("debug") else "")
        self.fn.notices.append(self.info.reporter.make(small, f"{kind} statement", "the thread stops here, as it "
                                                       "does in Numba (which reports nothing without debug=True)"
                                                       + host))
        stop = self.thread_end()
        if isinstance(small, cst.Raise):
            return [stop]
        return [ir.If(cond=ir.Unary("not", self.expr(small.test)), body=[stop], orelse=[])]

    def thread_end(self):
        """The statement that ends the thread where Numba raises: a kernel's return; in a device function, where
        Numba's exception status makes each caller return in turn up to the kernel's end, n2c::exit_thread()."""
        return ir.ExprStmt(value=ir.Call(intrinsics.EXIT_THREAD, [])) if self.fn.is_device else ir.Return()
