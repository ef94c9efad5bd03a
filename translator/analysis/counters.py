"""typed KernelIR -> int64 counters that provably fit 32 bits, declared `int` in C.

Numba types `n = 0` and `n += 1` as int64. In a kernel's hottest loop a 64-bit add costs a register pair and
issue slots that an `int` does not (monte_carlo_pi: 1-2% of its time on the H200, the same PTX otherwise). A counter
that starts at 0 and is incremented by 1 at most once per iteration of one range loop running at most 2**31 - 1
times takes only values an int holds, so the int holds exactly Numba's value. Its reads keep Numba's type: the
name's C type is int, and the legalizer converts it where C's arithmetic would differ from Numba's int64.
"""

from __future__ import annotations

from ..ir import nodes as ir
from ..ir import typesys as T
from .dataflow import sub_blocks

INT32_MAX = 2**31 - 1


def narrow_counters(fn: ir.Function) -> None:
    sites: dict = {}  # Variable -> [(Assign, its block, its index there, enclosing loops)]
    other = set()  # Variables defined otherwise too (a loop counter, a tuple target)

    def walk(block, loops):
        for k, s in enumerate(block):
            if isinstance(s, ir.Assign) and s.target.var is not None:
                sites.setdefault(id(s.target.var), []).append((s, block, k, loops))
            elif isinstance(s, ir.ForRange):
                other.add(id(s.target.var))
            elif isinstance(s, ir.TupleCall):
                other.update(id(t.var) for t in s.targets)
            inner = loops + [s] if isinstance(s, (ir.ForRange, ir.While)) else loops
            for sub in sub_blocks(s):
                walk(sub, inner)

    walk(fn.body, [])
    for key, defs in sites.items():
        if len(defs) != 2 or key in other:
            continue
        (init, block, k, outer), (inc, _, _, loops) = defs
        var = init.target.var
        if var.is_param or var.type != T.INT64 or not isinstance(var.declared_at, (ir.Assign, type(None))):
            continue
        if not (_const(init.value) == 0 and _increment(inc, var)):
            continue
        if len(loops) != len(outer) + 1 or any(a is not b for a, b in zip(loops, outer)):
            continue  # the increment is in exactly one loop more than the start
        loop = loops[-1]
        if isinstance(loop, ir.ForRange) and any(s is loop for s in block[k + 1:]) and _bounded(loop):
            var.c_type = T.INT32
            inc.target.type = inc.value.type = inc.value.left.type = T.INT32  # an int add cannot overflow here


def _const(e):
    return e.value if isinstance(e, ir.Const) and isinstance(e.value, int) and not isinstance(e.value, bool) \
        else None


def _increment(s: ir.Assign, var) -> bool:
    v = s.value
    return isinstance(v, ir.BinOp) and v.op == "+" and isinstance(v.left, ir.Name) and v.left.var is var \
        and _const(v.right) == 1


def _bounded(loop: ir.ForRange) -> bool:
    """At most 2**31 - 1 iterations: from a constant >= 0 by 1 to a constant or an int32 (or narrower) value."""
    start, stop = _const(loop.start), loop.stop
    if start is None or start < 0 or _const(loop.step) != 1:
        return False
    if _const(stop) is not None:
        return _const(stop) <= INT32_MAX
    t = stop.type
    return isinstance(t, T.Scalar) and t.is_int and (t.bits <= 16 or t.bits == 32 and t.kind == "i")
