"""typed KernelIR -> C-ready KernelIR: casts where C's conversions differ from Numba's, helpers for Python semantics."""

from __future__ import annotations

import numpy as np

from ..ir import nodes as ir
from ..ir.facts import is_pure
from ..ir import typesys as T
from ..analysis.bounds import Bounds
from ..analysis.dataflow import sub_blocks
from ..errors import Unsupported
from ..ir import intrinsics
from ..ir.intrinsics import Intrinsic
from ..ir.facts import root_array


def convert_const(c: ir.Const, to: T.Scalar) -> ir.Const:
    if to == c.const_type:
        return c
    if to.is_complex:
        value = complex(c.value)
        if to == T.COMPLEX64:
            value = complex(float(np.float32(value.real)), float(np.float32(value.imag)))
        out = ir.Const(value, to)
        out.node = c.node
        return out
    if isinstance(c.value, complex):
        return None  # Numba has no complex-to-real conversion (the typer reports it)
    if T.BFLOAT16 in (to, c.type) or "q" in (to.kind, c.type.kind):
        return None  # cuda_bf16.h's (cuda_fp8.h's) constructor rounds it, as numba-cuda's binding does
    if to.kind == "b":
        value = bool(c.value)
    elif to.is_float:
        value = float(np.array(c.value, dtype=np.float64).astype(to.name))
    else:
        if isinstance(c.value, float) and not np.isfinite(c.value):
            return None
        value = int(np.array(c.value).astype(np.float64 if isinstance(c.value, float) else np.int64).astype(to.name)) \
            if not (to.kind == "u" and to.bits == 64 and isinstance(c.value, int)) else c.value % 2**64
    out = ir.Const(value, to)
    out.node = c.node
    if getattr(c, "hex", False) and value == c.value and to.is_int:  # math.log(0x7f) is 127.0, not 0x7f
        out.hex = True
    return out


def cast_to(e: ir.Expr, to: T.Scalar) -> ir.Expr:
    """`e` converted to `to`, as a folded literal or an explicit cast; unchanged if C already has that type."""
    if e.ctype == to:
        return e
    if isinstance(e, ir.Const):
        folded = convert_const(e, to)
        if folded is not None:
            if folded.ctype == to or (to.is_int and folded.ctype.is_int and T.c_common(folded.ctype, to) == to):
                return folded
            e = folded
    c = ir.Cast(to, e)
    c.type = to
    c.node = e.node
    return c


def _long_literal(e: ir.Expr) -> bool:
    """A 64-bit literal, printed 5000000000LL or 5ull: long long in C, not int64_t (long), so a template helper
    would deduce another type from it than from an int64_t variable."""
    t = getattr(e, "const_type", None)
    return isinstance(e, ir.Const) and not e.name and t.is_int and t.bits == 64 and \
        (t.kind == "u" or not -2**31 <= e.value < 2**31)


def _exact(e: ir.Expr, to: T.Scalar) -> ir.Cast:
    """`e` as exactly `to` in C, where cast_to would leave a literal that C converts implicitly."""
    c = ir.Cast(to, e)
    c.type, c.node = to, e.node
    return c


class Legalizer:
    def __init__(self, fn: ir.Function, helpers: set, assume_nonnegative: bool = True):
        self.fn = fn
        self.helpers = helpers
        self.bounds = Bounds(fn, assume_nonnegative)

    def run(self):
        if any(getattr(a, "dtype", None) is not None and a.dtype.is_complex for a in getattr(self.fn, "arrays", [])) \
                or any(isinstance(v.type, T.Scalar) and v.type.is_complex for v in self.fn.variables):
            self.helpers.add("complex")  # the kernel's complex64/complex128 need the types' definitions
        if any(getattr(a, "dtype", None) == T.FLOAT16 for a in getattr(self.fn, "arrays", [])) \
                or any(v.type == T.FLOAT16 for v in self.fn.variables) \
                or any(p.type == T.FLOAT16 for p in self.fn.params):
            self.helpers.add("fp16")  # __half comes from <cuda_fp16.h>
        if any(v.type == T.BFLOAT16 for v in self.fn.variables) or any(p.type == T.BFLOAT16 for p in self.fn.params):
            self.helpers.add("bf16")
        if any(v.type in T.CUDA_FP8_TYPES for v in self.fn.variables) or \
                any(p.type in T.CUDA_FP8_TYPES for p in self.fn.params):
            self.helpers.add("fp8")
        for record in {a.dtype for a in getattr(self.fn, "arrays", []) if isinstance(a.dtype, T.Record)}:
            kinds = {getattr(t, "dtype", t) for t in map(record.field_type, record.names)}
            if any(t.is_complex for t in kinds):
                self.helpers.add("complex")  # a record's struct holds the complex type's definition
            if T.FLOAT16 in kinds:
                self.helpers.add("fp16")
        self.block(self.fn.body)
        self.fn.assumptions |= self.bounds.assumed

    def block(self, body):
        self.bounds.enter_block(body)
        for i, s in enumerate(body):
            self.statement(s)
            self.bounds.after_statement(body, i)
        self.bounds.leave_block()

    def statement(self, s):
        if isinstance(s, ir.Assign):
            s.value = self.value_into(s.value, s.target.type)
        elif isinstance(s, ir.Store):
            s.target = self.expr(s.target)
            s.value = self.value_into(s.value, s.target.type)
        elif isinstance(s, ir.If):
            s.cond = self.expr(s.cond, condition=True)
            with self.bounds.guard(s.cond, s.body):
                self.block(s.body)
            with self.bounds.guard(s.cond, s.orelse, negate=True):
                self.block(s.orelse)
        elif isinstance(s, ir.While):
            s.cond = self.expr(s.cond, condition=True)
            with self.bounds.guard(s.cond, s.body):
                self.block(s.body)
        elif isinstance(s, ir.ForRange):
            t = s.target.type
            s.start, s.stop, s.step = (self.value_into(x, t) for x in (s.start, s.stop, s.step))
            if isinstance(s.step, ir.Const):
                s.step_sign = 1 if s.step.value > 0 else -1
            elif self.bounds.at_least(s.step, 1):
                s.step_sign = 1  # e.g. a grid-stride loop: blockDim.x * gridDim.x is positive
            else:
                s.step_sign = 0
                self.helpers.add("range_len")
            self.block(s.body)
        elif isinstance(s, ir.Return):
            if len(s.values) == 1 and isinstance(self.fn.return_type, T.Scalar):
                s.values = [self.value_into(s.values[0], self.fn.return_type)]
            elif len(s.values) > 1:
                s.values = [self.value_into(v, t) for v, t in zip(s.values, self.fn.return_type.items)]
        elif isinstance(s, ir.ExprStmt):
            s.value = self.expr(s.value)
        elif isinstance(s, ir.Print):
            s.items = [i if isinstance(i, ir.StringLit) else self.expr(i) for i in s.items]
        elif isinstance(s, ir.TupleCall):
            s.call = self.expr(s.call)
        elif isinstance(s, ir.ArrayBind):
            if s.cond is not None:
                s.cond = self.expr(s.cond, condition=True)
            for arr in (s.source, s.orelse):
                if arr is not None:
                    self.unnamed_view(arr)
        elif isinstance(s, ir.ArrayDecl):
            arr = s.array
            self.layout(arr)
            self.unnamed_view(arr.base)  # `c = a[i, :3]`: the row a[i] it slices is a view of its own

    def value_into(self, e, to):
        e = self.expr(e)
        if isinstance(e, ir.Const) and isinstance(to, T.Scalar):
            folded = convert_const(e, to)
            return folded if folded is not None else e
        if to == T.COMPLEX64 and e.ctype == T.COMPLEX128:  # as Numba narrows it; complex64's constructor is explicit
            return cast_to(e, to)
        if isinstance(e, ir.IfExp) and isinstance(to, T.Scalar) and to.is_float and e.type.is_float \
                and to.bits < e.type.bits:
            return narrow(e, to) or e
        return e

    # ------------------------------------------------------------ expressions
    def expr(self, e, condition=False):
        if isinstance(e.type, T.Scalar) and e.type.is_complex:
            self.helpers.add("complex")
        if e.type == T.FLOAT16:
            self.helpers.add("fp16")
        elif e.type == T.BFLOAT16:
            self.helpers.add("bf16")  # __nv_bfloat16 comes from <cuda_bf16.h>
        elif e.type in T.CUDA_FP8_TYPES:
            self.helpers.add("fp8")  # __nv_fp8_e4m3 ... come from <cuda_fp8.h>
        method = getattr(self, "x_" + type(e).__name__, None)
        if isinstance(e, ir.BoolOp):
            return self.x_BoolOp(e, condition)
        return method(e) if method else e

    def x_Name(self, e):
        return e

    def x_PitchOf(self, e):
        return e

    def x_ShapeOf(self, e):
        return e  # a dynamic array's length needs dynamic_smem_bytes where it is printed (CPrinter.extent)

    def x_Cast(self, e):
        e.value = self.expr(e.value)
        if isinstance(e.value, ir.Const):  # before the test below: `int32(3)` prints as `3` but stays an int32
            folded = convert_const(e.value, e.type)
            if folded is not None:
                return folded
        if e.value.ctype == e.type:
            return e.value
        e.to = e.type
        return e

    def x_Member(self, e):
        e.value = self.expr(e.value)
        if e.value.type.is_complex or e.value.type.name in T.RECORD_FIELDS:
            return e
        if e.field == "real":  # x.real of a real number is x; x.imag is a zero of its type
            return e.value
        zero = ir.Const(0, e.type) if not e.type.is_float else ir.Const(0.0, e.type)
        zero.node = e.node
        return zero

    def x_BinOp(self, e):
        e.left, e.right = self.expr(e.left), self.expr(e.right)
        R = e.type
        op = e.op
        if op in ("<<", ">>"):
            # C gives a shift its left operand's type, not the common one: `1 << n` of an int literal is an int
            # shift (undefined past bit 31), where Numba shifts an int64
            e.left = _exact(e.left, R) if T.c_promote(e.left.ctype) != R else e.left
            return e
        if op == "**":
            return self.power(e)
        if op in ("//", "%") and R.is_int:
            return self.int_division(e)
        if op in ("//", "%"):
            self.helpers.add("float_divmod")
            name = "n2c::float_floordiv" if op == "//" else "n2c::float_mod"
            return self.helper_call(name, [e.left, e.right], R, e)
        self._balance(e, R)
        return e

    def _balance(self, e, R):
        """Cast operands until C's usual arithmetic conversions land on Numba's type R."""
        if T.c_common(e.left.ctype, e.right.ctype) == R:
            return
        if e.left.ctype != R:
            e.left = cast_to(e.left, R)
        if T.c_common(e.left.ctype, e.right.ctype) != R:
            e.right = cast_to(e.right, R)

    def int_division(self, e):
        R = e.type
        if self.bounds.at_least(e.left, 0) and self.bounds.at_least(e.right, 1):
            e.op = "/" if e.op == "//" else "%"
            self._balance(e, R)
            return e
        helper = "floordiv" if e.op == "//" else "mod"
        self.helpers.add(helper)
        return self.helper_call(f"n2c::{helper}", [e.left, e.right], R, e)

    def power(self, e):
        R = e.type
        base, exp = e.left, e.right
        if R.is_complex:
            # Numba types every complex power as (complex, complex): the exponent is made complex, whatever it
            # is, and numba-cuda's cpow computes it, a literal z ** 2 too (measured on the H200: it is not z * z
            # there, though CPU Numba multiplies)
            self.helpers |= {"complex", "cpow"}
            return self.helper_call("n2c::cpow", [cast_to(base, R), cast_to(exp, R)], R, e, explicit=False)
        if exp.type.is_int or exp.type.kind == "b":
            if isinstance(exp, ir.Const) and exp.value == 2 and isinstance(base, (ir.Name, ir.Load)):
                # Numba's x ** 2 is exactly one multiplication
                b = cast_to(base, R)
                out = ir.BinOp("*", b, b)
                out.type, out.node = R, e.node
                return out
            self.helpers.add("ipow")
            # the template deduces its result type from the base: a literal base (`2 ** k`) is written as R,
            # not left an int, or 2 ** k (int64 in Numba) would be an int in C
            base = _exact(base, R) if isinstance(base, ir.Const) and base.ctype.is_int else cast_to(base, R)
            call = self.helper_call("n2c::ipow", [base, exp], R, e, explicit=False)
            return call
        fn = "powf" if R == T.FLOAT32 else "pow"
        return self.helper_call(fn, [cast_to(base, R), cast_to(exp, R)], R, e, explicit=False)

    def helper_call(self, name, args, R, e, explicit=True):
        same = all(a.ctype == R and not _long_literal(a) for a in args)
        c_name = name if same or not explicit else f"{name}<{T.c_name(R)}>"
        call = ir.Call(Intrinsic(name, c_name, lambda ts: R, (len(args), len(args))), args, c_name)
        call.type, call.node = R, e.node
        return call

    def x_Unary(self, e):
        e.operand = self.expr(e.operand)
        if e.op == "not":
            return e
        if e.op == "~" and e.type.kind == "b":
            e.op = "not"
            return e
        if T.c_promote(e.operand.ctype) != e.type:
            e.operand = cast_to(e.operand, e.type)
        return e

    def x_Compare(self, e):
        e.left, e.right = self.expr(e.left), self.expr(e.right)
        common = T.compare_common(e.left.type, e.right.type)
        if _compares_exactly(e.left.ctype, e.right.ctype, common):
            return e
        if T.c_common(e.left.ctype, e.right.ctype) != common:
            if e.left.ctype != common:
                e.left = cast_to(e.left, common)
            if T.c_common(e.left.ctype, e.right.ctype) != common:
                e.right = cast_to(e.right, common)
        return e

    def x_BoolOp(self, e, condition=False):
        e.values = [self.expr(v, condition=condition) for v in e.values]
        if condition or all(v.type == T.BOOL for v in e.values):
            return e  # C's && and || test numbers for truth as Python does; as a value, bools stay bools
        # `x = n or 3`: the first operand that is true (`or`) or false (`and`), else the last, in Numba's type
        if not all(is_pure(v) for v in e.values[:-1]):
            raise Unsupported(e.node, f"'{e.op}' of non-boolean values with a call",
                              "Python returns one of the operands, which would be evaluated twice here",
                              "assign the operand to a variable first")
        R = e.type
        out = cast_to(e.values[-1], R)
        for v in reversed(e.values[:-1]):
            pick = cast_to(v, R)
            chosen = ir.IfExp(v, pick, out) if e.op == "or" else ir.IfExp(v, out, pick)
            chosen.type, chosen.node = R, e.node
            out = chosen
        return out

    def x_IfExp(self, e):
        e.cond = self.expr(e.cond, condition=True)
        e.then, e.orelse = self.expr(e.then), self.expr(e.orelse)
        R = e.type
        if T.c_common(e.then.ctype, e.orelse.ctype) != R:
            e.then, e.orelse = cast_to(e.then, R), cast_to(e.orelse, R)
        return e

    def x_Call(self, e):
        e.args = [self.expr(a) for a in e.args]
        if e.intrinsic in (intrinsics.WRAP_INDEX, intrinsics.SLICE_BOUND) and self.bounds.at_least(e.args[0], 0):
            return e.args[0]  # a row index or slice bound known not to be negative needs no wraparound
        ts = [a.type for a in e.args]
        entry = e.intrinsic
        if entry.arg_types is not None:
            wanted = entry.arg_types(ts)
            e.args = [a if w is None else cast_to(a, w) for a, w in zip(e.args, wanted)]
            c_name = entry.c_name(ts) if callable(entry.c_name) else entry.c_name
            if c_name.startswith("n2c::") and "<" not in c_name:  # a template helper deduces T from each argument:
                # min(n, 0) of an int64 (where its template arguments are written out, C converts as for a call)
                e.args = [a if w is None or (a.ctype == w and not _long_literal(a)) else _exact(a, w)
                          for a, w in zip(e.args, wanted)]
        if not e.c_name:
            e.c_name = entry.c_name(ts) if callable(entry.c_name) else entry.c_name
        if entry.c_result is not None and entry.c_result(ts) is not None:
            e.result_ctype = entry.c_result(ts)
            if e.result_ctype.kind != e.type.kind or e.result_ctype.is_float != e.type.is_float:
                c = ir.Cast(e.type, e)
                c.type, c.node = e.type, e.node
                return c
        return e

    def x_DeviceCall(self, e):
        e.args = [self.expr(a) for a in e.args]
        params = e.target.params
        lbs = e.target.__dict__.setdefault("param_lbs", {})
        for a, p in zip(e.args, params):
            if isinstance(p.type, T.Scalar) and p.type.is_int:
                lo, deps = self.bounds.lb(a)
                seen = lbs.get(p.name, "unset")
                if lo is None or seen is None:
                    lbs[p.name] = None
                else:
                    lbs[p.name] = lo if seen == "unset" else min(seen, lo)
                    self.bounds.assumed |= deps
        e.args = [cast_to(a, p.type) if isinstance(a, ir.Const) and isinstance(p.type, T.Scalar) else a
                  for a, p in zip(e.args, params)]
        return e

    def x_Load(self, e):
        self.unnamed_view(e.array)
        e.indices = [self.expr(i) for i in e.indices]
        if e.sub is not None:  # an array field's indices: C's own array member, indexed in range as Numba's
            e.sub = [self.expr(i) for i in e.sub]
        # a CPointer is indexed as is (Numba's pointer arithmetic); an array's negative index counts from its end
        e.wrap = [not root_array(e.array).pointer and not self.bounds.at_least(i, 0) for i in e.indices]
        if any(e.wrap):
            self.helpers.add("wrap")
            if e.array.kind == "dynamic" or (e.array.kind == "view" and root_array(e.array).kind == "dynamic"):
                self.helpers.add("dynamic_smem_bytes")
        return e

    def x_ArrayRef(self, e):
        self.unnamed_view(e.array)
        return e

    def unnamed_view(self, arr):
        """A view used in place (`f(res[g:])`) has no declaration to legalize its offset; do it here, once."""
        while arr is not None and arr.kind == "view" and not arr.name and not getattr(arr, "legalized", False):
            arr.legalized = True
            self.layout(arr)
            arr = arr.base

    def layout(self, arr):
        """The expressions a view's elements are found by: its offset, extents, pitch and step."""
        if arr.offset is not None:
            arr.offset = self.expr(arr.offset)
        arr.shape = [self.expr(d) if isinstance(d, ir.Expr) else d for d in arr.shape]
        if arr.pitch is not None:
            arr.pitch = [p if p is None else self.expr(p) for p in arr.pitch]
        if arr.step is not None:
            arr.step = self.expr(arr.step)

    def x_AddressOf(self, e):
        e.target = self.expr(e.target)
        return e


def narrow(e, to):
    """`e` computed directly in the narrower float type `to`, when that gives exactly (to)e, else None.

    Converting to float32 distributes over a conditional, and float32 -> float64 -> float32 is exact,
    so `x if c else 0.` stored into a float32 array needs no double precision at all."""
    if isinstance(e, ir.Const):
        return convert_const(e, to)
    if e.type == to and e.ctype == to:
        return e
    if isinstance(e, ir.Cast) and e.value.type == to and e.value.ctype == to:
        return e.value
    if isinstance(e, ir.IfExp):
        then, orelse = narrow(e.then, to), narrow(e.orelse, to)
        if then is None or orelse is None:
            return None
        out = ir.IfExp(e.cond, then, orelse)
        out.type, out.node = to, e.node
        return out
    return None


def _compares_exactly(a: T.Scalar, b: T.Scalar, common: T.Scalar) -> bool:
    """Does C compare these as Numba does? Widening is harmless in a comparison; changing sign or
    rounding an integer to float32 is not."""
    c = T.c_common(a, b)
    if c == common:
        return True
    if c is None or common.is_complex:
        return False
    if a.kind in "iub" and b.kind in "iub":
        return c.kind == "i" or (a.kind in "ub" and b.kind in "ub")
    if c.is_float:
        ints = [t for t in (a, b) if not t.is_float]
        return c.bits == 64 or all(t.bits < 24 for t in ints)
    return False


__all__ = ["Legalizer", "cast_to", "convert_const", "sub_blocks"]
