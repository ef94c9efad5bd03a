"""C-ready KernelIR -> CUDA C text: one visit_ per node and a precedence table, as pycparser's c_generator."""

from __future__ import annotations

import math

import numpy as np

from ..ir import nodes as ir
from ..ir import typesys as T
from ..analysis.dataflow import stmt_exprs, walk_expr
from ..ir.cnames import NameTable
from ..lower.declarations import plan_declarations
from ..lower.names import renamed
from ..ir.facts import root_array

# C operator precedence (higher binds tighter).
PRECEDENCE = {
    "?:": 3, "||": 4, "&&": 5, "|": 6, "^": 7, "&": 8, "==": 9, "!=": 9, "<": 10, "<=": 10, ">": 10, ">=": 10,
    "<<": 11, ">>": 11, "+": 12, "-": 12, "*": 13, "/": 13, "%": 13, "unary": 14, "postfix": 15, "primary": 16,
}
BITWISE = {"|", "^", "&", "<<", ">>"}
INDENT = "    "


def c_literal(value, t: T.Scalar) -> str:
    if t == T.FLOAT16:  # the value is a half already: as a float it converts exactly
        return f"__half({c_literal(value, T.FLOAT32)})"
    if t.is_complex:
        part = T.underlying(t)
        return f"{T.c_name(t)}({c_literal(complex(value).real, part)}, {c_literal(complex(value).imag, part)})"
    if t.kind == "b":
        return "true" if value else "false"
    if t.is_float:
        if math.isnan(value):
            return "NAN" if t == T.FLOAT32 else "(double)NAN"
        if math.isinf(value):
            inf = "INFINITY" if t == T.FLOAT32 else "(double)INFINITY"
            return inf if value > 0 else "-" + inf
        text = str(np.float32(value)) if t == T.FLOAT32 else repr(float(value))
        if "e" not in text and "." not in text:
            text += ".0"
        return text + ("f" if t == T.FLOAT32 else "")
    if t.kind == "u":
        return f"{value}u" if t.bits <= 32 else f"{value}ull"
    if not -2**31 <= value < 2**31:
        return f"{value}LL" if value != -2**63 else "(-9223372036854775807LL - 1)"
    return str(value)


def c_type(t) -> str:
    return T.c_name(t)


class CPrinter:
    def __init__(self, where, constant_names: dict | None = None):
        self.where = where  # libcst node -> "file.py:LINE" (a device function imported from a sibling: its file)
        self.declared_dynamic = False
        self.constants_used: set = set()  # module constants printed, by their Python names
        self.helpers_printed: set = set()  # helpers of calls only printing decides on (a view's clipped length)
        self.constant_names = constant_names or {}  # Python name -> C name (lower/names.py)
        self.names = NameTable()  # the function being printed: made-up names are claimed here
        self.renames_shown: set = set()  # user names whose C spelling a line comment already gave

    # ------------------------------------------------------------ expressions
    def expr(self, e) -> str:
        return self.visit(e)[0]

    def visit(self, e):
        return getattr(self, "visit_" + type(e).__name__)(e)

    def wrap(self, e, min_prec, *, strict=False) -> str:
        text, prec = self.visit(e)
        if prec < min_prec or (strict and prec == min_prec):
            return f"({text})"
        return text

    def visit_Const(self, e):
        if e.name:
            self.constants_used.add(e.name)
            return self.constant_names.get(e.name, e.name), PRECEDENCE["primary"]
        text = c_literal(e.value, e.const_type)
        if getattr(e, "hex", False) and e.const_type.is_int and e.value >= 0:
            text = hex(e.value) + text[len(str(e.value)):]
        return text, PRECEDENCE["unary"] if text.startswith("-") else PRECEDENCE["primary"]

    def visit_Name(self, e):
        return e.var.c_name, PRECEDENCE["primary"]

    def visit_Builtin(self, e):
        return e.text, PRECEDENCE["postfix"]

    def visit_BinOp(self, e):
        p = PRECEDENCE[e.op]
        # parentheses GCC would ask for (-Wparentheses) also help a reader: a + b << c
        left_min = p + 1 if e.op in BITWISE else p
        right_min = p + 1 if e.op in BITWISE else p
        left = self._operand(e.left, left_min, e.op)
        right = self._operand(e.right, right_min, e.op, strict=True)
        return f"{left} {e.op} {right}", p

    def _operand(self, child, min_prec, op, strict=False):
        if isinstance(child, ir.BinOp) and (child.op in BITWISE) != (op in BITWISE):
            return self.wrap(child, PRECEDENCE["primary"])
        return self.wrap(child, min_prec, strict=strict)

    def visit_Unary(self, e):
        op = "!" if e.op == "not" else e.op
        inner = self.wrap(e.operand, PRECEDENCE["unary"])
        if op == "-" and inner.startswith("-"):
            inner = f"({inner})"
        return f"{op}{inner}", PRECEDENCE["unary"]

    def visit_Compare(self, e):
        p = PRECEDENCE[e.op]
        return f"{self.wrap(e.left, p + 1)} {e.op} {self.wrap(e.right, p + 1)}", p

    def visit_BoolOp(self, e):
        op = "&&" if e.op == "and" else "||"
        p = PRECEDENCE[op]
        parts = [self.wrap(v, PRECEDENCE["|"] if isinstance(v, ir.BoolOp) else p) for v in e.values]
        return f" {op} ".join(parts), p

    def visit_IfExp(self, e):
        p = PRECEDENCE["?:"]
        return f"{self.wrap(e.cond, p + 1)} ? {self.wrap(e.then, p + 1)} : {self.wrap(e.orelse, p)}", p

    def visit_Member(self, e):
        field = {"real": "re", "imag": "im"}.get(e.field, e.field)  # a record's fields keep their names
        return f"{self.wrap(e.value, PRECEDENCE['postfix'])}.{field}", PRECEDENCE["postfix"]

    def visit_Cast(self, e):
        if e.value.ctype == T.FLOAT16 and e.to != T.FLOAT32:
            # __half converts to float exactly, then as Numba converts a half; its other conversions are ambiguous
            return f"({c_type(e.to)})(float){self.wrap(e.value, PRECEDENCE['unary'])}", PRECEDENCE["unary"]
        if e.to == T.FLOAT16 and e.value.ctype.is_int:
            # through double: exact below 2**53, and anything past 65504 is infinite in half anyway
            return f"(__half)(double){self.wrap(e.value, PRECEDENCE['unary'])}", PRECEDENCE["unary"]
        if e.to.is_complex:  # a constructor: n2c::complex64(x), n2c::complex128(z64)
            return f"{c_type(e.to)}({self.expr(e.value)})", PRECEDENCE["postfix"]
        return f"({c_type(e.to)}){self.wrap(e.value, PRECEDENCE['unary'])}", PRECEDENCE["unary"]

    def visit_Call(self, e):
        if e.intrinsic.helper:  # a printed call needs its helper (a view's length is printed only where read)
            self.helpers_printed.add(e.intrinsic.helper)
        return f"{e.c_name}({', '.join(self.expr(a) for a in e.args)})", PRECEDENCE["postfix"]

    def visit_PitchOf(self, e):
        return pitch_name(self.names, e.array, e.dim), PRECEDENCE["primary"]

    def visit_ShapeOf(self, e):
        if e.array.kind == "dynamic":
            return self.extent(e.array, e.dim), PRECEDENCE["unary"]
        e.array.shape_used.add(e.dim)
        return shape_name(self.names, e.array, e.dim), PRECEDENCE["primary"]

    def visit_AddressOf(self, e):
        return f"&{self.wrap(e.target, PRECEDENCE['postfix'])}", PRECEDENCE["unary"]

    def visit_StringLit(self, e):
        raise AssertionError("strings are printed by visit_Print")

    def extent(self, arr: ir.ArrayVar, d: int) -> str:
        if arr.kind in ("param", "alias"):
            arr.shape_used.add(d)
            return shape_name(self.names, arr, d)
        if arr.kind == "dynamic":
            self.helpers_printed.add("dynamic_smem_bytes")
            return f"(int64_t)(n2c::dynamic_smem_bytes() / sizeof({c_type(arr.dtype)}))"
        return self.expr(arr.shape[d])

    def step_extent(self, arr: ir.ArrayVar, k: int) -> str:
        """What one step of dimension k - 1 moves over in the flat index: dimension k's extent, or a window's
        pitch (its rows lie as far apart as the viewed array's)."""
        if arr.pitch is not None:
            return self.wrap(arr.pitch[k], PRECEDENCE["*"] + 1)
        return self.extent(arr, k)

    def index_text(self, e: ir.Load, k: int) -> str:
        idx = e.indices[k]
        if e.wrap and e.wrap[k]:
            return f"n2c::wrap({self.expr(idx)}, {self.extent(e.array, k)})"
        return self.expr(idx)

    def visit_Load(self, e):
        arr = e.array
        if arr.c_dims:
            text = arr.name + "".join(f"[{self.index_text(e, k)}]" for k in range(arr.ndim))
            return text, PRECEDENCE["postfix"]
        flat, flat_prec = None, 0
        for k in range(arr.ndim):
            idx = self.index_text(e, k)
            if flat is None:
                flat, flat_prec = idx, self._index_prec(e, k)
                continue
            if flat == "0":
                flat, flat_prec = idx, self._index_prec(e, k)
                continue
            prev = flat if flat_prec >= PRECEDENCE["*"] else f"({flat})"
            zero = isinstance(e.indices[k], ir.Const) and e.indices[k].value == 0 and not e.indices[k].name
            step = self.step_extent(arr, k)
            scaled = step if flat == "1" else f"{prev} * {step}"
            flat = scaled + ("" if zero else f" + {idx}")
            flat_prec = PRECEDENCE["*"] if zero else PRECEDENCE["+"]
        if arr.step is not None and flat != "0":  # a strided view's elements lie step apart in the array it views
            prev = flat if flat_prec >= PRECEDENCE["*"] else f"({flat})"
            flat = f"{prev} * {self.wrap(arr.step, PRECEDENCE['*'] + 1)}"
        return f"{self.array_text(arr)}[{flat}]", PRECEDENCE["postfix"]

    def array_text(self, arr: ir.ArrayVar) -> str:
        """How C names an array's elements: its name, or for a view used in place (`f(res[g:])`,
        `res[g:][i]`) the pointer it stands for, in parentheses."""
        if arr.name:
            return arr.name
        return f"({self.pointer_text(arr)})"

    def pointer_text(self, arr: ir.ArrayVar) -> str:
        """A pointer to the array's first element."""
        if arr.c_dims:
            return f"&{arr.name}" + "[0]" * arr.ndim
        if arr.name:
            return arr.name
        base = self.pointer_text(arr.base)
        if arr.offset is None or (isinstance(arr.offset, ir.Const) and arr.offset.value == 0):
            return base
        return f"{base} + {self.wrap(arr.offset, PRECEDENCE['+'], strict=True)}"

    def _index_prec(self, e, k):
        if e.wrap and e.wrap[k]:
            return PRECEDENCE["postfix"]
        return self.visit(e.indices[k])[1]

    def visit_ArrayRef(self, e):
        return ", ".join(array_arguments(e.array, self)), PRECEDENCE["primary"]

    def visit_DeviceCall(self, e):
        template = ""
        if e.target.per_call:  # a template of a host function's call values: the caller passes its own on
            mine = {py: c for py, c, _ in self.function.per_call}
            template = f"<{', '.join(mine[py] for py, _, _ in e.target.per_call)}>"
        return f"{e.target.c_name}{template}({', '.join(self.expr(a) for a in e.args)})", PRECEDENCE["postfix"]

    # ------------------------------------------------------------ statements
    def function_body(self, fn: ir.Function, prologue: list) -> list[str]:
        self.names = fn.names
        self.function = fn
        # parameters' renames are noted on the function's own line comment
        self.renames_shown = {id(p.array if p.array is not None else getattr(p, "variable", None)) for p in fn.params}
        plan_declarations(fn)
        aliases = [a for a in getattr(fn, "arrays", []) if a.kind == "alias"]
        for _ in range(4):  # an alias declares the extents its uses print: learn them before its declaration
            before = [set(a.shape_used) for a in aliases]
            if not aliases:
                break
            self.declared_dynamic = False
            self.block(fn.body, 1)
            if before == [a.shape_used for a in aliases]:
                break
        self.declared_dynamic = False
        lines = [INDENT + p for p in prologue]
        lines += self.block(fn.body, 1)
        return lines

    def comment(self, s) -> str:
        where = self.where(s.node) if s.node is not None else None
        notes = self._renames(s)
        if not where:
            return f"  // renamed: {notes}" if notes else ""
        return f"  // {where}" + (f" (renamed: {notes})" if notes else "")

    def _renames(self, s) -> str:
        """`py -> c` for each user name C could not keep, at the first statement that mentions it."""
        owners = []
        if isinstance(s, (ir.Assign, ir.ForRange)):
            owners.append(s.target.var)
        elif isinstance(s, ir.TupleCall):
            owners += [t.var for t in s.targets]
        elif isinstance(s, ir.ArrayDecl):
            owners.append(s.array)
        for e in stmt_exprs(s):
            for node in walk_expr(e):
                if isinstance(node, ir.Name):
                    owners.append(node.var)
                elif isinstance(node, (ir.Load, ir.ArrayRef)):
                    owners.append(node.array)
        notes = []
        for owner in owners:
            note = renamed(owner) if owner is not None and id(owner) not in self.renames_shown else ""
            if note:
                self.renames_shown.add(id(owner))
                notes.append(note)
        return ", ".join(notes)

    def block(self, body, depth) -> list[str]:
        out = []
        for s in body:
            out.extend(self.statement(s, depth))
        return out

    def statement(self, s, depth) -> list[str]:
        pad = INDENT * depth
        method = getattr(self, "stmt_" + type(s).__name__)
        return [pad + line if line else line for line in method(s, depth)]

    def stmt_Declare(self, s, depth):
        return [f"{c_type(s.var.c_type or s.var.type)} {s.var.c_name};"]

    def stmt_Assign(self, s, depth):
        value = self.expr(s.value)
        name = s.target.var.c_name
        if getattr(s, "declare", False):
            return [f"{c_type(s.target.var.c_type or s.target.var.type)} {name} = {value};" + self.comment(s)]
        if isinstance(s.value, ir.BinOp) and isinstance(s.value.left, ir.Name) and s.value.left.var is s.target.var \
                and s.value.op in ("+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"):
            rhs = self.wrap(s.value.right, PRECEDENCE["?:"])
            if s.value.op in ("+", "-") and rhs == "1" and s.value.type.is_int:
                return [f"{name}{s.value.op * 2};" + self.comment(s)]
            return [f"{name} {s.value.op}= {rhs};" + self.comment(s)]
        return [f"{name} = {value};" + self.comment(s)]

    def stmt_Store(self, s, depth):
        target = self.expr(s.target)
        v = s.value
        if isinstance(v, ir.BinOp) and isinstance(v.left, ir.Load) and self.expr(v.left) == target \
                and v.op in ("+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"):
            return [f"{target} {v.op}= {self.wrap(v.right, PRECEDENCE['?:'])};" + self.comment(s)]
        return [f"{target} = {self.expr(v)};" + self.comment(s)]

    def stmt_ArrayDecl(self, s, depth):
        arr = s.array
        t = c_type(arr.dtype)
        dims = "".join(f"[{self.expr(d)}]" for d in arr.shape) if arr.c_dims else ""
        if arr.kind == "shared":
            return [f"__shared__ {t} {arr.name}{dims};" + self.comment(s)]
        if arr.kind == "local":
            return [f"{t} {arr.name}{dims};" + self.comment(s)]
        if arr.kind == "const":
            return []
        if arr.kind == "alias":
            const = "" if arr.written else "const "
            return [f"{const}{t} *{arr.name};" + self.comment(s)] + \
                [f"int64_t {arr.name}_shape{d};" for d in sorted(arr.shape_used)]
        if arr.kind == "dynamic":
            out = []
            if not self.declared_dynamic:
                out.append("extern __shared__ __align__(16) unsigned char n2c_dynamic_smem[];")
                self.declared_dynamic = True
            out.append(f"{t} *{arr.name} = reinterpret_cast<{t} *>(n2c_dynamic_smem);" + self.comment(s))
            return out
        base = self.pointer_text(arr.base)
        const = "" if root_array(arr).written else "const "
        if arr.offset is None or (isinstance(arr.offset, ir.Const) and arr.offset.value == 0):
            return [f"{const}{t} *{arr.name} = {base};" + self.comment(s)]
        return [f"{const}{t} *{arr.name} = {base} + {self.wrap(arr.offset, PRECEDENCE['+'], strict=True)};"
                + self.comment(s)]

    def stmt_ArrayBind(self, s, depth):
        alias = s.alias
        if s.cond is None:
            pointer = self.pointer_text(s.source)
            extents = [self.extent(s.source, d) for d in sorted(alias.shape_used)]
        else:
            cond = self.wrap(s.cond, PRECEDENCE["?:"] + 1)
            pick = lambda a, b: f"{cond} ? {a} : {b}"  # noqa: E731
            pointer = pick(self.pointer_text(s.source), self.pointer_text(s.orelse))
            extents = [pick(self.extent(s.source, d), self.extent(s.orelse, d)) for d in sorted(alias.shape_used)]
        out = [f"{alias.name} = {pointer};" + self.comment(s)]
        out += [f"{alias.name}_shape{d} = {e};" for d, e in zip(sorted(alias.shape_used), extents)]
        return out

    def _base_pointer(self, arr):
        return f"&{arr.name}" + "[0]" * arr.ndim if arr.c_dims else arr.name

    def stmt_If(self, s, depth, keyword="if"):
        out = [f"{keyword} ({self.expr(s.cond)}) {{" + self.comment(s)]
        out += self.block(s.body, 1)
        if len(s.orelse) == 1 and isinstance(s.orelse[0], ir.If) and s.orelse[0].node is not s.node:
            inner = self.stmt_If(s.orelse[0], depth, "} else if")
            return out + inner
        if s.orelse:
            out.append("} else {")
            out += self.block(s.orelse, 1)
        out.append("}")
        return out

    def stmt_While(self, s, depth):
        return [f"while ({self.expr(s.cond)}) {{" + self.comment(s)] + self.block(s.body, 1) + ["}"]

    def stmt_ForRange(self, s, depth):
        var = s.target.var
        t = c_type(var.type)
        start, stop, step = s.start, s.stop, s.step
        prologue = []
        stop_text = self.expr(stop)
        if getattr(s, "hoist_stop", False):
            stop_name = self.names.claim_as(("stop", var), f"{var.c_name}_stop")
            prologue.append(f"const {t} {stop_name} = {stop_text};" + self.comment(s))
            stop_text = stop_name
        counter = var.c_name if not s.counter else s.counter
        decl = f"{t} " if (getattr(s, "declare", False) or s.counter) else ""
        sign = s.step_sign
        if sign:
            cmp = "<" if sign > 0 else ">"
            if isinstance(step, ir.Const) and abs(step.value) == 1:
                incr = f"++{counter}" if sign > 0 else f"--{counter}"
            elif sign > 0:
                incr = f"{counter} += {self.expr(step)}"
            else:
                incr = f"{counter} -= {c_literal(-step.value, step.const_type)}"
            header = f"for ({decl}{counter} = {self.expr(start)}; {counter} {cmp} {stop_text}; {incr}) {{"
        else:
            # a step whose sign is only known at run time: count the iterations like Python's range
            n = self.names.claim_as(("count", var), f"{var.c_name}_count")
            k = self.names.claim_as(("k", var), f"{var.c_name}_k")
            prologue.append(f"const int64_t {n} = n2c::range_len({self.expr(start)}, {stop_text}, "
                            f"{self.expr(step)});" + self.comment(s))
            header = f"for (int64_t {k} = 0; {k} < {n}; ++{k}) {{"
        body = []
        if not sign:
            value = f"{self.wrap(start, PRECEDENCE['+'])} + {k} * {self.wrap(step, PRECEDENCE['*'] + 1)}"
            body.append(INDENT + (f"{t} {var.c_name} = {value};" if getattr(s, "declare", False)
                                  else f"{var.c_name} = {value};"))
        elif s.counter:
            body.append(INDENT + f"{var.c_name} = {counter};")
        loop = [header + self.comment(s)] + body + self.block(s.body, 1) + ["}"]
        if not prologue:
            return loop
        # the hoisted bound gets its own scope, so two loops over the same name do not collide
        return ["{"] + [INDENT + line for line in prologue + loop] + ["}"]

    def stmt_Break(self, s, depth):
        return ["break;" + self.comment(s)]

    def stmt_Continue(self, s, depth):
        return ["continue;" + self.comment(s)]

    def stmt_Return(self, s, depth):
        if not s.values:
            return ["return;" + self.comment(s)]
        if len(s.values) == 1:
            return [f"return {self.expr(s.values[0])};" + self.comment(s)]
        return [f"return {{{', '.join(self.expr(v) for v in s.values)}}};" + self.comment(s)]

    def stmt_ExprStmt(self, s, depth):
        return [f"{self.expr(s.value)};" + self.comment(s)]

    def stmt_TupleCall(self, s, depth):
        if isinstance(s.call, ir.DeviceCall):
            fn = s.call.target
            ret = self.names.claim_as(("ret", fn), f"{fn.c_name}_ret")
            out = [f"const {fn.result_name} {ret} = {self.expr(s.call)};" + self.comment(s)]
        else:  # an intrinsic returning a tuple (n2c::match_all_sync)
            base = s.call.c_name.rsplit(':', 1)[-1]
            ret = self.names.claim_as(("ret", base), f"{base}_ret")
            out = [f"const auto {ret} = {self.expr(s.call)};" + self.comment(s)]
        for k, t in enumerate(s.targets):
            out.append(f"{t.var.c_name} = {ret}.v{k};")
        return ["{"] + [INDENT + line for line in out] + ["}"]

    def stmt_Print(self, s, depth):
        fmt, args = [], []
        for item in s.items:
            if isinstance(item, ir.StringLit):
                fmt.append(item.value.replace("%", "%%"))
                continue
            t = item.type
            text = self.expr(item)
            if t.kind == "b":
                fmt.append("%s")
                args.append(f'{self.wrap(item, PRECEDENCE["?:"] + 1)} ? "True" : "False"')
            elif t.is_float:
                fmt.append("%f")
                args.append(text)
            elif t.bits <= 32:
                fmt.append("%u" if t.kind == "u" else "%d")
                args.append(text)
            else:
                fmt.append("%llu" if t.kind == "u" else "%lld")
                args.append(f"({'unsigned ' if t.kind == 'u' else ''}long long){self.wrap(item, PRECEDENCE['unary'])}")
        literal = " ".join(fmt).encode("unicode_escape").decode("ascii").replace('"', '\\"') + "\\n"
        return [f'printf("{literal}"{"".join(", " + a for a in args)});' + self.comment(s)]


def pitch_name(names: NameTable, arr: ir.ArrayVar, d: int) -> str:
    """A window parameter's pitch (ArrayVar.pitch), as the device function's C parameter names it; d == ndim:
    a strided parameter's step (ArrayVar.step)."""
    return names.claim_as(("pitch", id(arr), d), f"{arr.name}_step" if d == arr.ndim else f"{arr.name}_pitch{d}")


def shape_name(names: NameTable, arr: ir.ArrayVar, d: int) -> str:
    """The C name of a parameter array's extent d, claimed in its function's scope."""
    return names.claim_as(("shape", id(arr), d), f"{arr.name}_shape{d}")


def array_arguments(arr: ir.ArrayVar, printer: CPrinter) -> list[str]:
    """How an array travels into a device function: its pointer and every extent (a window: and its pitch)."""
    if arr.pointer:  # a CPointer travels alone
        return [printer.pointer_text(arr)]
    pitch = [printer.step_extent(arr, d) for d in range(1, arr.ndim)] if arr.pitch is not None else []
    if arr.step is not None:
        pitch.append(printer.expr(arr.step))
    return [printer.pointer_text(arr)] + [printer.extent(arr, d) for d in range(arr.ndim)] + pitch
