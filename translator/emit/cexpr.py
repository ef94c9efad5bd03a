"""C-ready KernelIR expressions -> CUDA C expression text: one visit_ per node and a precedence table, as
pycparser's c_generator; arrays as pointers, extents, pitches and steps."""

from __future__ import annotations

import math

import numpy as np

from ..ir import nodes as ir
from ..ir import typesys as T
from ..ir.cnames import NameTable

# C operator precedence (higher binds tighter).
PRECEDENCE = {
    "?:": 3, "||": 4, "&&": 5, "|": 6, "^": 7, "&": 8, "==": 9, "!=": 9, "<": 10, "<=": 10, ">": 10, ">=": 10,
    "<<": 11, ">>": 11, "+": 12, "-": 12, "*": 13, "/": 13, "%": 13, "unary": 14, "postfix": 15, "primary": 16,
}
BITWISE = {"|", "^", "&", "<<", ">>"}


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


class ExprPrinter:
    """KernelIR expressions -> C text at a precedence; CPrinter adds the statements."""
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
        if e.to in T.FP8:  # cuda_fp8.h's constructor of the value's own C type, as numba-cuda's binding calls
            return f"{c_type(e.to)}({self.expr(e.value)})", PRECEDENCE["postfix"]
        if e.value.ctype in T.FP8:  # its conversion operator to that C type (numba-cuda binds each)
            return f"({c_type(e.to)}){self.wrap(e.value, PRECEDENCE['unary'])}", PRECEDENCE["unary"]
        if e.to == T.BFLOAT16:  # cuda_bf16.h's constructor of the value's own C type, as numba-cuda's binding calls
            return f"__nv_bfloat16({self.expr(e.value)})", PRECEDENCE["postfix"]
        if e.value.ctype == T.BFLOAT16 and e.to != T.FLOAT32:
            # exact as a float; then as C converts a float (truncation, saturation), which __bfloat162int_rz matches
            return f"({c_type(e.to)})(float){self.wrap(e.value, PRECEDENCE['unary'])}", PRECEDENCE["unary"]
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
        helper = e.intrinsic.helper
        if callable(helper):  # a helper some argument types need (abs of an int8 or a uint32)
            helper = helper([a.type for a in e.args])
        if helper:  # a printed call needs its helper (a view's length is printed only where read)
            self.helpers_printed.add(helper)
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

    def extent(self, arr: ir.ArrayVar, d: int, factor: bool = False) -> str:
        """Dimension D's extent; FACTOR: as a factor of a product (a computed one, a reshape's `n // 2`, keeps its
        parentheses where it multiplies an index)."""
        if arr.kind in ("param", "alias"):
            arr.shape_used.add(d)
            return shape_name(self.names, arr, d)
        if arr.kind == "dynamic":
            self.helpers_printed.add("dynamic_smem_bytes")
            return f"(int64_t)(n2c::dynamic_smem_bytes() / sizeof({c_type(arr.dtype)}))"
        return self.wrap(arr.shape[d], PRECEDENCE["*"] + 1) if factor else self.expr(arr.shape[d])

    def step_extent(self, arr: ir.ArrayVar, k: int) -> str:
        """What one step of dimension k - 1 moves over in the flat index: dimension k's extent, or a window's
        pitch (its rows lie as far apart as the viewed array's)."""
        if arr.pitch is not None:
            return self.wrap(arr.pitch[k], PRECEDENCE["*"] + 1)
        return self.extent(arr, k, factor=True)

    def index_text(self, e: ir.Load, k: int) -> str:
        idx = e.indices[k]
        if e.wrap and e.wrap[k]:
            return f"n2c::wrap({self.expr(idx)}, {self.extent(e.array, k)})"
        return self.expr(idx)

    def visit_Load(self, e):
        arr = e.array
        sub = "".join(f"[{self.expr(i)}]" for i in e.sub or [])  # `r.h[k]`: the struct's array member
        member = f".{e.field}{sub}" if e.field is not None else ""  # a record's field
        if arr.c_dims:
            text = arr.name + "".join(f"[{self.index_text(e, k)}]" for k in range(arr.ndim))
            return text + member, PRECEDENCE["postfix"]
        flat, flat_prec = None, 0
        # row-major: ((i0 * n1 + i1) * n2 + i2); column-major the other way round: ((i2 * n1 + i1) * n0 + i0)
        order = range(arr.ndim - 1, -1, -1) if arr.fortran else range(arr.ndim)
        for k in order:
            idx = self.index_text(e, k)
            if flat is None:
                flat, flat_prec = idx, self._index_prec(e, k)
                continue
            if flat == "0":
                flat, flat_prec = idx, self._index_prec(e, k)
                continue
            prev = flat if flat_prec >= PRECEDENCE["*"] else f"({flat})"
            zero = isinstance(e.indices[k], ir.Const) and e.indices[k].value == 0 and not e.indices[k].name
            step = self.extent(arr, k, factor=True) if arr.fortran else self.step_extent(arr, k)
            scaled = step if flat == "1" else f"{prev} * {step}"
            flat = scaled + ("" if zero else f" + {idx}")
            flat_prec = PRECEDENCE["*"] if zero else PRECEDENCE["+"]
        if flat is None:  # a 0-d array, indexed a[()]: its one element
            flat = "0"
        if arr.step is not None and flat != "0":  # a strided view's elements lie step apart in the array it views
            prev = flat if flat_prec >= PRECEDENCE["*"] else f"({flat})"
            flat = f"{prev} * {self.wrap(arr.step, PRECEDENCE['*'] + 1)}"
        if e.field is not None and arr.ndim == 0 and arr.name:  # `r.x` of a named record: r points at it
            return f"{arr.name}->{e.field}{sub}", PRECEDENCE["postfix"]
        return f"{self.array_text(arr)}[{flat}]{member}", PRECEDENCE["postfix"]

    def array_text(self, arr: ir.ArrayVar) -> str:
        """How C names an array's elements: its name, or for a view used in place (`f(res[g:])`,
        `res[g:][i]`) the pointer it stands for, in parentheses."""
        if arr.name:
            return arr.name
        text = self.pointer_text(arr)
        return text if text.isidentifier() else f"({text})"  # `a.T` is `a` read the other way round

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


def pitch_name(names: NameTable, arr: ir.ArrayVar, d: int) -> str:
    """A window parameter's pitch (ArrayVar.pitch), as the device function's C parameter names it; d == ndim:
    a strided parameter's step (ArrayVar.step)."""
    return names.claim_as(("pitch", id(arr), d), f"{arr.name}_step" if d == arr.ndim else f"{arr.name}_pitch{d}")


def shape_name(names: NameTable, arr: ir.ArrayVar, d: int) -> str:
    """The C name of a parameter array's extent d, claimed in its function's scope."""
    return names.claim_as(("shape", id(arr), d), f"{arr.name}_shape{d}")


def array_arguments(arr: ir.ArrayVar, printer: ExprPrinter) -> list[str]:
    """How an array travels into a device function: its pointer and every extent (a window: and its pitch)."""
    if arr.pointer:  # a CPointer travels alone
        return [printer.pointer_text(arr)]
    pitch = [printer.step_extent(arr, d) for d in range(1, arr.ndim)] if arr.pitch is not None else []
    if arr.step is not None:
        pitch.append(printer.expr(arr.step))
    return [printer.pointer_text(arr)] + [printer.extent(arr, d) for d in range(arr.ndim)] + pitch
