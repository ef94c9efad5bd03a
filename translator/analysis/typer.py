"""untyped KernelIR -> typed KernelIR: Numba's typing of every expression and of every variable web."""

from __future__ import annotations

from functools import reduce

from ..ir import nodes as ir
from ..ir import typesys as T
from .dataflow import ReachingDefs, stmt_exprs, sub_blocks, walk_expr, walk_statements, webs
from .variables import Variables
from ..errors import Unsupported

class TypeErrorAt(Unsupported):
    pass


def range_type(types):
    if any(t is None for t in types):
        return None
    if any(not t.is_int and t.kind != "b" for t in types):
        return "float"
    if all(t.kind in "ib" and t.bits <= 32 for t in types):
        return T.INT32
    if all(t.kind == "u" for t in types):
        return T.UINT64
    return T.INT64


def converted(value, to, where=None):
    """VALUE converted to TO where Numba converts implicitly and C++ must be told, located where VALUE is (else at
    WHERE)."""
    cast = ir.Cast(to, value)
    cast.node = value.node or where
    return cast


class Typer:
    def __init__(self, fn: ir.Function, program, reporter):
        self.fn = fn
        self.program = program
        self.reporter = reporter
        self.web_types: dict[int, object] = {}
        self.def_types: dict[int, object] = {}  # def id -> its value's type (a use unifies those reaching it)
        self.failed_webs: set = set()  # webs with a definition already reported: their uses stay quiet
        self.reported_unset: set = set()
        # id(node) -> its type, once the webs' types are final: finalize asks for every node of an expression,
        # and typing a node types its subtree, which would be quadratic in the depth of a + b + c + ...
        self.known: dict | None = None

    # ------------------------------------------------------------ driver
    def run(self):
        self.defs = ReachingDefs(self.fn, self.reporter).run()
        self.web_of = webs(self.fn, self.defs, self.reporter)
        for _ in range(50):
            before = (dict(self.web_types), dict(self.def_types))
            for d, site in enumerate(self.defs.sites):
                try:
                    t = self.def_type(site)
                except TypeErrorAt as exc:
                    self.report(exc, site[1].node if len(site) > 1 else None)  # once; typing goes on
                    self.failed_webs.add(self.web_of[d])
                    t = None
                w = self.web_of[d]
                try:
                    self.def_types[d] = T.unify(self.def_types.get(d), t)
                    self.web_types[w] = T.unify(self.web_types.get(w), t)
                except TypeError:
                    node = site[1].node if len(site) > 1 else None
                    raise TypeErrorAt(node, f"'{self.defs.names[d]}' takes incompatible types",
                                      f"{self.web_types.get(w)} and {t}", "use separate variable names") from None
            if before == (self.web_types, self.def_types):
                break
        self.known = {}
        self.finalize(self.fn.body)
        self.known = None
        Variables(self.fn, self.defs, self.web_of, self.web_types, self.def_types, converted).make()
        self.fn.return_type = self.return_type()

    def def_type(self, site):
        kind = site[0]
        if kind == "param":
            return site[1].type
        if kind == "assign":
            return self.type_of(site[1].value)
        if kind == "for":
            s = site[1]
            given = [s.stop] if s.given == 1 else [s.start, s.stop] if s.given == 2 else [s.start, s.stop, s.step]
            rt = range_type([self.type_of(x) for x in given])
            if rt == "float":  # range(a.size / 2): Numba converts a float bound to int64 (truncating), as C does
                for attr in ("start", "stop", "step"):
                    bound = getattr(s, attr)
                    t = self.type_of(bound) if bound is not None else None
                    if isinstance(t, T.Scalar) and not (t.is_int or t.kind == "b"):
                        if t.is_complex:
                            raise TypeErrorAt(s.node, "range() of a complex number", "range takes real numbers")
                        setattr(s, attr, converted(bound, T.INT64, s.node))
                return T.INT64
            return rt
        if kind == "tuple":
            s, k = site[1], site[2]
            rt = self.type_of(s.call)
            if rt is None:
                return None
            if not isinstance(rt, T.Tuple) or len(rt.items) != len(s.targets):
                n = len(rt.items) if isinstance(rt, T.Tuple) else 1
                callee = s.call.func_name if isinstance(s.call, ir.DeviceCall) else s.call.intrinsic.key
                raise TypeErrorAt(s.node, "tuple unpacking", f"'{callee}' returns {n} value(s), "
                                  f"unpacked into {len(s.targets)}")
            return rt.items[k]
        raise AssertionError(kind)

    # ------------------------------------------------------------ expressions
    def type_of(self, e):
        if self.known is not None and id(e) in self.known:
            return self.known[id(e)]
        t = getattr(self, "t_" + type(e).__name__)(e)
        if self.known is not None:
            self.known[id(e)] = t
        return t

    def t_Const(self, e):
        return e.const_type

    def t_Name(self, e):
        """The unification of the definitions that reach this use, as Numba's phi node types it: where an int
        `k` is rebound to a float on one branch, `k`'s uses before the join stay int (PyEchelle's alias draw
        indexes with it) and only those after it are float."""
        if not e.defs:
            return None
        known = [t for t in (self.def_types.get(d) for d in e.reach) if t is not None]
        if not known:
            return None
        try:
            return reduce(T.unify, known)
        except TypeError:  # reported where the web's definitions are unified
            return self.web_types.get(self.web_of[min(e.defs)])

    def t_Builtin(self, e):
        return e.numba_type

    def t_StringLit(self, e):
        return None

    def t_ShapeOf(self, e):
        return T.INT64

    t_PitchOf = t_ShapeOf

    def t_ArrayRef(self, e):
        # a window is its own type: the device function it is passed to takes its pitch (and step) too
        arr = e.array
        layout = "P" if arr.pointer else "S" if arr.step is not None else "W" if arr.pitch is not None else \
            "F" if arr.fortran else "C"
        return T.Array(e.array.dtype, e.array.ndim, layout)

    def t_Load(self, e):
        for i in e.indices + (e.sub or []):
            t = self.type_of(i)
            if t is not None and not (isinstance(t, T.Scalar) and (t.is_int or t.kind == "b")):
                raise TypeErrorAt(i.node or e.node, "array index", f"indices must be integers, got {t}, which "
                                  "Numba refuses too", "convert with int(...); numba-cuda's math.floor, math.ceil "
                                  "and math.trunc return floats, unlike Python's")
        if e.field is not None:  # a record's field; of an array field, the element indexed
            t = e.array.dtype.field_type(e.field)
            if e.sub is None and not isinstance(t, T.Scalar):
                raise TypeErrorAt(e.node, "a record's array field used whole", f"numba2cuda reads its elements "
                                  f"({t})", "index it: r.h[k]")
            return t.dtype if e.sub is not None else t
        return e.array.dtype

    def atomic_indices(self, address) -> None:
        """An atomic's float index is converted to an integer, as Numba's atomics convert their indices to intp
        (`cuda.atomic.sub(sm, (tx, f), 1)` compiles; `sm[tx, f]` does not)."""
        while isinstance(address, ir.Call):  # a complex part's address
            address = address.args[0]
        load = address.target if isinstance(address, ir.AddressOf) else None
        for k, index in enumerate(load.indices if isinstance(load, ir.Load) else ()):
            t = self.type_of(index)
            if isinstance(t, T.Scalar) and t.is_float:
                load.indices[k] = converted(index, T.INT64, load.node)

    def t_AddressOf(self, e):
        return self.type_of(e.target)

    def _scalars(self, e, *operands, storage=False):
        """The operands' scalar types; STORAGE: FP8 values are taken too (a conversion's operand)."""
        ts = [self.type_of(o) for o in operands]
        if any(t is None for t in ts):
            return None
        for o, t in zip(operands, ts):
            if not isinstance(t, T.Scalar) or t.kind == "r":
                raise TypeErrorAt(o.node or e.node, "non-scalar operand", f"{t} cannot be used in arithmetic")
            if t.kind == "q" and not storage:
                raise TypeErrorAt(o.node or e.node, f"{t} operand", "numba-cuda's FP8 types are storage: they have "
                                  "no arithmetic or comparisons (Numba's typing finds none)",
                                  f"convert it first, float32(v), and back with {t.name}(x)")
        return ts

    def t_BinOp(self, e):
        ts = self._scalars(e, e.left, e.right)
        if ts is None:
            return None
        a, b = ts
        op = e.op
        if T.BFLOAT16 in ts:
            return _bfloat16_operands(e, a, b, op in ("+", "-", "*", "/"))
        if (a.is_complex or b.is_complex) and op not in ("+", "-", "*", "/", "**"):
            raise TypeErrorAt(e.node, f"'{op}' on a complex number", "complex numbers have +, -, *, / and ** 2 only")
        if op in "+-*":
            return T.arith_result(a, b, op)
        if op == "/":
            return T.truediv_result(a, b)
        if op in ("//", "%"):
            return T.arith_result(a, b, op)
        if op == "**":
            return T.pow_result(a, b)
        if a.is_float or b.is_float:
            raise TypeErrorAt(e.node, f"'{op}' on a float", "bit operations need integers", "convert with int(...)")
        if op in ("<<", ">>"):
            return T.shift_result(a)
        return T.bitwise_result(a, b)

    def t_Unary(self, e):
        ts = self._scalars(e, e.operand)
        if ts is None:
            return None
        if e.op == "~" and (ts[0].is_float or ts[0].is_complex):
            raise TypeErrorAt(e.node, "'~' on a float", "bit operations need integers")
        if ts[0] == T.BFLOAT16:
            return _bfloat16_operands(e, ts[0], ts[0], e.op in ("-", "+"))
        return T.unary_result(e.op, ts[0])

    def t_Compare(self, e):
        ts = self._scalars(e, e.left, e.right)
        if ts is not None and T.BFLOAT16 in ts and e.op not in ("is", "is not"):
            _bfloat16_operands(e, ts[0], ts[1], True)
            return T.BOOL
        if e.op in ("is", "is not") and ts is not None:
            if ts[0] != T.BOOL or ts[1] != T.BOOL:
                raise TypeErrorAt(e.node, f"'{e.op}' comparison", f"of {ts[0].name} and {ts[1].name}: Numba's "
                                  "`is` compares two booleans' values, and numbers only where both have one type "
                                  "(else it is False)", "compare values with == or !=")
            e.op = "==" if e.op == "is" else "!="
        if ts and any(t.is_complex for t in ts) and e.op not in ("==", "!="):
            raise TypeErrorAt(e.node, f"'{e.op}' on a complex number", "complex numbers are not ordered",
                              "compare abs(z) or z.real")
        return T.BOOL

    def t_Member(self, e):
        fields = T.RECORD_FIELDS.get(getattr(self.type_of(e.value), "name", None))
        if fields is not None:  # states[i]["s0"]
            return fields[e.field]
        if e.field not in ("real", "imag") and self.type_of(e.value) is not None:
            raise TypeErrorAt(e.node or e.value.node, f"attribute .{e.field}", f"a {self.type_of(e.value)} has no "
                              f"attribute '{e.field}'")
        ts = self._scalars(e, e.value)
        if ts is None:
            return None
        return T.underlying(ts[0]) if ts[0].is_complex else ts[0]

    def t_BoolOp(self, e):
        """`a or b` is one of its operands (Numba joins them at a phi node): a bool of bools, else their
        unification (`n or 3`, `a[i] and b[i]`)."""
        ts = self._scalars(e, *e.values)
        if ts is None or all(t == T.BOOL for t in ts):
            return T.BOOL
        try:
            return reduce(T.unify, ts)
        except TypeError:
            raise TypeErrorAt(e.node, f"'{e.op}' of {' and '.join(map(str, ts))}", "Python returns one of the "
                              "operands, and these have no common type", "convert them to one type") from None

    def t_IfExp(self, e):
        ts = self._scalars(e, e.cond, e.then, e.orelse)
        return None if ts is None else T.unify(ts[1], ts[2])

    def t_Cast(self, e):
        ts = self._scalars(e, e.value, storage=True)
        if ts is None:
            return None
        t = ts[0]
        if t.kind == "q" and (e.to in ("int", "float") or e.to.is_complex or e.to == T.BOOL or e.to.kind == "q"
                              or t == T.BF16RAW) and e.to != t:
            # numba-cuda binds the conversions to each sized number type; Python's int()/float(), bool() (no
            # lowering), one FP8 type from another and the raw bfloat16's are not among them
            name = e.to if e.to in ("int", "float") else e.to.name
            raise TypeErrorAt(e.node, f"{name}() of a {t}", "numba-cuda binds no such conversion (Numba's typing "
                              "or lowering refuses it)", f"convert through a sized type: {name}(float32(v))"
                              if t != T.BF16RAW else "read its bits, v.x")
        if t.is_complex and (e.to in ("int", "float") or not e.to.is_complex):
            raise TypeErrorAt(e.node, f"{e.to}() of a complex number", "Numba cannot convert a complex number to a "
                              "real one", "take z.real, z.imag or abs(z)")
        if e.to == "int":
            return t if t.is_int else T.INT64
        if e.to == "float":
            return t if t.is_float else T.FLOAT64
        return e.to

    def t_Call(self, e):
        if e.intrinsic.key.startswith("cuda.atomic."):
            self.atomic_indices(e.args[0])
        ts = [self.type_of(a) for a in e.args]
        if any(t is None for t in ts):
            return None
        if any(getattr(t, "kind", "") == "q" for t in ts) and not e.intrinsic.key.startswith("cuda._internal.cuda_fp8"):
            raise TypeErrorAt(e.node, f"{e.intrinsic.key.rpartition('.')[2]}() of an FP8 value", "numba-cuda's FP8 "
                              "types are storage: no function but cuda_fp8's own takes them",
                              "convert it first, float32(v)")
        pointers = e.intrinsic.pointers or {}
        for k, (a, t) in enumerate(zip(e.args, ts)):
            if k in pointers and (not isinstance(t, T.Array) or t.dtype != pointers[k]):
                raise TypeErrorAt(a.node or e.node, f"{e.intrinsic.key}() argument {k + 1}", f"takes "
                                  f"CPointer({pointers[k]}), got {t}")
            if k not in pointers and not isinstance(t, T.Scalar):
                raise TypeErrorAt(e.node, f"{e.intrinsic.key}()", "arguments must be numbers")
        result = e.intrinsic.result(ts)
        if result is None:
            raise TypeErrorAt(e.node, f"{e.intrinsic.key}()", "does not accept arguments of types "
                              + ", ".join(map(str, ts)))
        return result

    def t_DeviceCall(self, e):
        ts = [self.type_of(a) for a in e.args]
        if any(t is None for t in ts):
            return None
        nodes = [a.node for a in e.args]
        if e.groups:  # a tuple passed whole: one Tuple type for its items (the callee is specialised on it)
            flat_ts, flat_nodes, ts, nodes = iter(ts), iter(nodes), [], []

            def nested(shape):  # a tuple's types from its flat items, as its shape nests them
                return T.Tuple(tuple(next(flat_ts) if s is None else nested(s) for s in shape))

            for g in e.groups:
                first = next(flat_nodes)
                for _ in range(count_leaves(g) - 1):
                    next(flat_nodes)
                ts.append(next(flat_ts) if g is None else nested(g))
                nodes.append(first)
        e.target = self.program.instantiate(e.key or e.func_name, ts, e.node, nodes)
        if not e.groups:  # a signature's complex64 parameter given a complex128: Numba converts, C++ must be told
            for i, (arg, t) in enumerate(zip(list(e.args), ts)):
                p = e.target.params[i].type if i < len(e.target.params) else None
                if isinstance(p, T.Scalar) and p.is_complex and t != p and isinstance(t, T.Scalar):
                    e.args[i] = converted(arg, p)
        rt = e.target.return_type
        return rt if not isinstance(rt, T.Void) else T.VOID

    def report(self, exc: TypeErrorAt, where) -> None:
        """EXC, located at its own node, else at WHERE (the statement), else at the function: an expression
        made by the lowering (a tuple variable's item) has no node of its own, and line 1 helps no one."""
        if exc.node is None:
            exc.node = where if where is not None else getattr(self.fn, "node", None)
        self.reporter.add_unsupported(exc)

    # ------------------------------------------------------------ results
    def finalize(self, body):
        for s in body:
            try:
                self.finalize_statement(s)
            except TypeErrorAt as exc:
                self.report(exc, s.node)
            for sub in sub_blocks(s):
                self.finalize(sub)

    def finalize_statement(self, s):
        for ex in stmt_exprs(s):
            for node in walk_expr(ex):
                node.type = self.type_of(node)
                if node.type is None and not isinstance(node, ir.StringLit):
                    names = [n for n in walk_expr(node) if isinstance(n, ir.Name)]
                    if any(not n.defs or self.web_of[min(n.defs)] in self.failed_webs for n in names):
                        return  # already reported: used before assignment, or its definition failed
                    unset = next((n for n in names if n.maybe_undefined), None)
                    if unset is not None:
                        if unset.name in self.reported_unset:
                            return
                        self.reported_unset.add(unset.name)
                        raise TypeErrorAt(unset.node or s.node, f"'{unset.name}' used before assignment",
                                          "it has no value the first time this runs",
                                          f"assign {unset.name} a starting value before the loop")
                    raise TypeErrorAt(node.node or s.node, "expression", "its type could not be inferred",
                                      "give the variable a value of a definite type first")
                if isinstance(node, ir.DeviceCall) and isinstance(node.type, T.Void) and \
                        not (isinstance(s, ir.ExprStmt) and s.value is node):
                    raise TypeErrorAt(node.node or s.node, f"'{node.func_name}' returns no value",
                                      "its result cannot be used", "call it on its own line")
        if isinstance(s, ir.Store) and isinstance(s.value.type, T.Scalar) and isinstance(s.target.type, T.Scalar) \
                and "q" in (s.value.type.kind, s.target.type.kind) and s.value.type != s.target.type:
            raise TypeErrorAt(s.node, f"{s.value.type} stored as {s.target.type}", "numba-cuda's FP8 types convert "
                              "to and from other types only where the code says so (Numba converts none implicitly)",
                              f"convert it: {s.target.type.name}(v)" if s.target.type.kind != "q" else
                              f"make it one: {s.target.type.name}(x)")
        if isinstance(s, ir.Store) and isinstance(s.value.type, T.Scalar) and s.value.type.is_complex \
                and not s.target.type.is_complex:
            raise TypeErrorAt(s.node, f"{s.value.type} stored into a {s.target.type} array",
                              "Numba cannot convert a complex number to a real one",
                              "store z.real, z.imag or abs(z), or make the array complex")
        if isinstance(s, (ir.If, ir.While)) and isinstance(s.cond.type, T.Array):
            raise TypeErrorAt(s.cond.node, "array as a condition", "arrays have no truth value")
        if isinstance(s, ir.Print) and any(getattr(getattr(v, "type", None), "kind", "") == "q" for v in s.items):
            raise TypeErrorAt(s.node, "print() of an FP8 value", "Numba has no printing for numba-cuda's FP8 types",
                              "print float32(v)")
        if isinstance(s, (ir.If, ir.While)) and getattr(s.cond.type, "kind", "") == "q":
            raise TypeErrorAt(s.cond.node, f"a {s.cond.type} as a condition", "numba-cuda's FP8 types have no truth "
                              "value (Numba has no lowering of bool() for them)", "compare float32(v) != 0")

    def return_type(self):
        if self.fn.is_kernel:
            return T.VOID
        found = [s for s in walk_statements(self.fn.body) if isinstance(s, ir.Return)]
        result = None
        for r in found:
            if not r.values:
                t = T.VOID
            elif len(r.values) == 1:
                t = r.values[0].type
            else:
                t = T.Tuple(tuple(v.type for v in r.values))
            if result is None or result == t:
                result = t
            elif isinstance(result, T.Scalar) and isinstance(t, T.Scalar):
                result = T.unify(result, t)
            elif isinstance(result, T.Tuple) and isinstance(t, T.Tuple) and len(result.items) == len(t.items):
                result = T.Tuple(tuple(T.unify(a, b) for a, b in zip(result.items, t.items)))
            elif T.VOID in (t, result):
                other = result if t == T.VOID else t
                where = r if t == T.VOID else next(x for x in found if not x.values)
                raise TypeErrorAt(where.node, "return None", f"returns None here and {other} elsewhere: Numba makes "
                                  "the result an Optional, whose every use checks it, and the translation has none",
                                  "return a sentinel value (such as -1) that the caller tests instead of None")
            else:
                raise TypeErrorAt(r.node, "return", f"returns {t} here but {result} elsewhere",
                                  "return the same kind of value on every path")
        return result or T.VOID


def count_leaves(shape) -> int:
    """How many flat items a DeviceCall group stands for: 1 for None, else the numbers and arrays it nests."""
    return 1 if shape is None else sum(count_leaves(s) for s in shape)


def _bfloat16_operands(e, a, b, defined: bool):
    """numba-cuda binds cuda_bf16.h's operators: +, -, *, / and comparisons of two bfloat16 values, unary - and +,
    which numba2cuda translates to the same operators. With another operand Numba converts through the conversions
    the binding registers, in an order numba2cuda does not reproduce: refused, with the explicit spelling."""
    if a == b == T.BFLOAT16 and defined:
        return T.BFLOAT16
    what = f"'{e.op}' of {a} and {b}" if a != b else f"'{e.op}' on bfloat16"
    raise TypeErrorAt(e.node, what, "numba2cuda translates cuda_bf16.h's +, -, *, / and comparisons of two bfloat16 "
                      "values; with any other operand, or operator, Numba picks one of the binding's conversions, "
                      "which numba2cuda does not guess", "convert explicitly: bfloat16(x) for the other operand, or "
                      "compute in float32 (float32(b)); cuda.bf16 has the other operations (hmax, hfma, ...)")
