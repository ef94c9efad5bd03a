"""Program -> a readable dump of the typed KernelIR (`translate --emit ir`), for inspecting what the typer decided."""

from __future__ import annotations

from ..ir import nodes as ir
from ..analysis.dataflow import sub_blocks


def _expr(e) -> str:
    if isinstance(e, ir.Const):
        return f"{e.name or e.value!r}:{e.type}"
    if isinstance(e, ir.Name):
        return e.var.c_name if e.var else e.name
    if isinstance(e, ir.Builtin):
        return e.text
    if isinstance(e, ir.BinOp):
        return f"({_expr(e.left)} {e.op} {_expr(e.right)}):{e.type}"
    if isinstance(e, ir.Unary):
        return f"({e.op} {_expr(e.operand)}):{e.type}"
    if isinstance(e, ir.Compare):
        return f"({_expr(e.left)} {e.op} {_expr(e.right)})"
    if isinstance(e, ir.BoolOp):
        return "(" + f" {e.op} ".join(_expr(v) for v in e.values) + ")"
    if isinstance(e, ir.IfExp):
        return f"({_expr(e.then)} if {_expr(e.cond)} else {_expr(e.orelse)}):{e.type}"
    if isinstance(e, ir.Cast):
        return f"{e.to}({_expr(e.value)})"
    if isinstance(e, ir.Call):
        return f"{e.c_name or e.intrinsic.key}({', '.join(_expr(a) for a in e.args)}):{e.type}"
    if isinstance(e, ir.Load):
        wrap = ["wrap " if w else "" for w in e.wrap] or [""] * len(e.indices)
        member = f".{e.field}" if e.field is not None else ""  # a record's field, an array field's element
        member += f"[{', '.join(_expr(i) for i in e.sub)}]" if e.sub is not None else ""
        return f"{e.array.name}[{', '.join(w + _expr(i) for w, i in zip(wrap, e.indices))}]{member}:{e.type}"
    if isinstance(e, ir.AddressOf):
        return "&" + _expr(e.target)
    if isinstance(e, ir.ShapeOf):
        return f"{e.array.name}.shape[{e.dim}]"
    if isinstance(e, ir.PitchOf):
        return f"{e.array.name}.pitch[{e.dim}]"
    if isinstance(e, ir.ArrayRef):
        return e.array.name
    if isinstance(e, ir.DeviceCall):
        return f"{e.target.c_name if e.target else e.func_name}({', '.join(_expr(a) for a in e.args)}):{e.type}"
    if isinstance(e, ir.StringLit):
        return repr(e.value)
    return type(e).__name__


def _stmt(s, depth, out):
    pad = "    " * depth
    if isinstance(s, ir.Assign):
        out.append(f"{pad}{s.target.var.c_name} = {_expr(s.value)}")
    elif isinstance(s, ir.Store):
        out.append(f"{pad}{_expr(s.target)} = {_expr(s.value)}")
    elif isinstance(s, ir.ArrayDecl):
        a = s.array
        out.append(f"{pad}array {a.name}: {a.kind} {a.dtype}[{', '.join(_expr(d) if d is not None else '?' for d in a.shape)}]")
    elif isinstance(s, ir.If):
        out.append(f"{pad}if {_expr(s.cond)}:")
    elif isinstance(s, ir.While):
        out.append(f"{pad}while {_expr(s.cond)}:")
    elif isinstance(s, ir.ForRange):
        out.append(f"{pad}for {s.target.var.c_name}:{s.target.type} in range({_expr(s.start)}, {_expr(s.stop)}, {_expr(s.step)}):")
    elif isinstance(s, ir.Return):
        out.append(f"{pad}return {', '.join(_expr(v) for v in s.values)}")
    elif isinstance(s, ir.ExprStmt):
        out.append(f"{pad}{_expr(s.value)}")
    elif isinstance(s, ir.Print):
        out.append(f"{pad}print({', '.join(_expr(i) for i in s.items)})")
    elif isinstance(s, ir.TupleCall):
        out.append(f"{pad}{', '.join(t.var.c_name for t in s.targets)} = {_expr(s.call)}")
    else:
        out.append(f"{pad}{type(s).__name__.lower()}")
    for k, sub in enumerate(sub_blocks(s)):
        if k == 1 and sub:
            out.append(f"{pad}else:")
        for inner in sub:
            _stmt(inner, depth + 1, out)


def format_function(fn: ir.Function) -> str:
    kind = "kernel" if fn.is_kernel else "device function"
    out = [f"{kind} {fn.c_name}({', '.join(f'{p.name}: {p.type}' for p in fn.params)}) -> {fn.return_type}"]
    if fn.variables:
        out.append("  variables: " + ", ".join(f"{v.c_name}: {v.type}" for v in fn.variables))
    if fn.assumptions:
        out.append("  assumes >= 0: " + ", ".join(sorted(fn.assumptions)))
    for s in fn.body:
        _stmt(s, 1, out)
    return "\n".join(out)


def format_program(program) -> str:
    parts = [format_function(fn) for fn in program.device_functions() + program.kernels]
    if program.helpers:
        parts.append("helpers: " + ", ".join(sorted(program.helpers)))
    return "\n\n".join(parts) + "\n"
