"""C-ready KernelIR -> CUDA C text: the statements, one stmt_ per node, over cexpr.ExprPrinter's expressions, as
pycparser's c_generator."""

from __future__ import annotations

from ..ir import nodes as ir
from ..analysis.dataflow import stmt_exprs, walk_expr
from ..lower.declarations import plan_declarations
from ..lower.names import renamed
from ..ir.facts import root_array
from .cexpr import PRECEDENCE, ExprPrinter, c_literal, c_type

INDENT = "    "


class CPrinter(ExprPrinter):
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
                [f"int64_t {arr.name}_shape{d};" for d in sorted(arr.shape_used)] + \
                ([f"int64_t {self.expr(arr.step)};"] if arr.step is not None else [])
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
        if alias.step is not None:  # a strided binding's step, 1 for a contiguous one
            steps = [self.expr(src.step) if src.step is not None else "1" for src in (s.source, s.orelse)
                     if src is not None]
            step = steps[0] if s.cond is None else f"{self.wrap(s.cond, PRECEDENCE['?:'] + 1)} ? {steps[0]} : {steps[1]}"
            out.append(f"{self.expr(alias.step)} = {step};")
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
        sign = s.step_sign
        prologue = []

        def hoisted(e, role):  # a bound Python evaluates once, held in a const of its own (in Python's order)
            name = self.names.claim_as((role, var), f"{var.c_name}_{role}")
            prologue.append(f"const {t} {name} = {self.expr(e)};" + self.comment(s))
            return ir.Builtin(name, var.type, var.type)

        if getattr(s, "hoist_start", False) and not sign and not isinstance(start, ir.Const):
            start = hoisted(start, "start")  # the body computes the counter from it where the sign is unknown
        if getattr(s, "hoist_stop", False):
            stop = hoisted(stop, "stop")
        stop_text = self.expr(stop)
        if getattr(s, "hoist_step", False) and not isinstance(step, ir.Const):
            step = hoisted(step, "step")
        counter = var.c_name if not s.counter else s.counter
        decl = f"{t} " if (getattr(s, "declare", False) or s.counter) else ""
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
        # the hoisted bounds get their own scope, so two loops over the same name do not collide
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
