"""A host function that makes a kernel on each call -> the kinds of the values its kernel reads from that call.

`def run(x): B, C, H, W = x.shape; @cuda.jit def k(inp, out): ... range(C) ...; k[grid, block](x, out)`:
Numba compiles one kernel per call of `run`, with that call's C baked in as a constant. The source cannot tell
the value, but it often tells the kind (an extent, `len()`, `int()`, a parameter's default number), and a
C++ template parameter is exactly a value baked in per instantiation. So an integer or bool the call
computes becomes a template parameter of the kernel (`template <int64_t C>`); a value whose kind the source
does not show is an integer where the kernel uses it as Numba accepts only integers (a range() bound, an
index, a shape), and otherwise stays an error.
"""

from __future__ import annotations

import libcst as cst

from ..errors import Unsupported
from ..ir import nodes as ir
from ..ir import typesys as T
from .expr import TupleValue
from .names import resolve

INT, BOOL, FLOAT = "int", "bool", "float"

_INT_CALLS = {"len", "int", "round", "math.ceil", "math.floor", "math.trunc", "math.factorial", "math.gcd",
              "math.comb", "math.perm", "math.isqrt", "operator.index"}
_FLOAT_CALLS = {"float", "math.sqrt", "math.exp", "math.log", "math.log2", "math.log10", "math.sin", "math.cos",
                "math.tan", "math.pow", "math.hypot", "math.atan2", "math.fabs"}
_NUMPY_INTS = {f"np.{t}" for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                                   "intp", "int_", "uint")}
_NUMPY_FLOATS = {"np.float32", "np.float64", "np.float16", "np.double", "np.single"}
_EXTENT_ATTRS = {"size", "ndim", "itemsize", "nbytes"}  # x.size: a Python int


def _join(kinds) -> str | None:
    kinds = set(kinds)
    if not kinds or None in kinds:
        return None
    if kinds <= {INT, BOOL}:
        return INT if INT in kinds else BOOL
    return FLOAT if kinds <= {INT, BOOL, FLOAT} else None


class _Kinds:
    """The kind of each name FN binds, from every expression bound to it (None where one is unknown)."""

    def __init__(self, view, fn: cst.FunctionDef):
        self.view = view
        self.sources: dict = {}  # name -> [expression, or a kind string for an unpacked extent]
        params = fn.params
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            self.sources.setdefault(p.name.value, []).append(p.default)  # None: the caller's, unknown
        if isinstance(fn.body, cst.IndentedBlock):
            self.statements(fn.body.body)
        self.kinds: dict = {}

    def statements(self, body) -> None:
        for stmt in body:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                self.sources.setdefault(stmt.name.value, []).append(None)
            elif isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    self.small(small)
            else:
                if isinstance(stmt, cst.For):
                    self.unknown(stmt.target)
                for field in ("body", "orelse", "finalbody"):
                    block = getattr(stmt, field, None)
                    block = getattr(block, "body", block)  # an Else/Finally holds its block
                    if isinstance(block, cst.BaseSuite):
                        self.statements(block.body if isinstance(block, cst.IndentedBlock) else [
                            cst.SimpleStatementLine(body=block.body)])
                for handler in getattr(stmt, "handlers", ()):
                    self.statements(handler.body.body)

    def small(self, small) -> None:
        if isinstance(small, cst.Assign):
            for target in small.targets:
                self.bind(target.target, small.value)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            self.bind(small.target, small.value)
        elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
            self.sources.setdefault(small.target.value, []).append(
                cst.BinaryOperation(left=small.target, operator=_binary_of(small.operator), right=small.value))
        elif isinstance(small, (cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal)):
            pass  # imports and globals are not the call's values
        elif isinstance(small, cst.Del):
            self.unknown(small.target)

    def bind(self, target, value) -> None:
        if isinstance(target, cst.Name):
            self.sources.setdefault(target.value, []).append(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            names = [e.value for e in target.elements]
            if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(names):
                for t, v in zip(names, value.elements):
                    self.bind(t, v.value)
            elif isinstance(value, cst.Attribute) and value.attr.value == "shape":
                for t in names:  # B, C, H, W = x.shape
                    if isinstance(t, cst.Name):
                        self.sources.setdefault(t.value, []).append(INT)
            else:
                self.unknown(target)

    def unknown(self, target) -> None:
        if isinstance(target, cst.Name):
            self.sources.setdefault(target.value, []).append(None)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                self.unknown(e.value)

    def of(self, name: str, active=()) -> str | None:
        if name in self.kinds:
            return self.kinds[name]
        if name in active:
            return None  # n = n * 2 through a loop of bindings: unknown
        kind = _join(self.expr(s, (*active, name)) if not isinstance(s, str) else s for s in self.sources[name])
        self.kinds[name] = kind
        return kind

    def expr(self, e, active) -> str | None:  # noqa: PLR0911 - one answer per expression form
        if e is None:
            return None
        if isinstance(e, cst.Integer):
            return INT
        if isinstance(e, cst.Float):
            return FLOAT
        if isinstance(e, cst.Name):
            if e.value in ("True", "False"):
                return BOOL
            if e.value in self.sources:
                return self.of(e.value, active)
            value = self.view.constants.get(e.value)
            return {bool: BOOL, int: INT, float: FLOAT}.get(type(value))
        if isinstance(e, cst.UnaryOperation):
            return BOOL if isinstance(e.operator, cst.Not) else self.expr(e.expression, active)
        if isinstance(e, cst.BinaryOperation):
            if isinstance(e.operator, cst.Divide):
                return FLOAT  # true division gives a float whatever it divides (a complex aside)
            kind = _join([self.expr(e.left, active), self.expr(e.right, active)])
            return INT if kind == BOOL else kind
        if isinstance(e, (cst.Comparison,)):
            return BOOL
        if isinstance(e, cst.BooleanOperation):
            return _join([self.expr(e.left, active), self.expr(e.right, active)])
        if isinstance(e, cst.IfExp):
            return _join([self.expr(e.body, active), self.expr(e.orelse, active)])
        if isinstance(e, cst.Attribute) and e.attr.value in _EXTENT_ATTRS:
            return INT
        if isinstance(e, cst.Subscript) and isinstance(e.value, cst.Attribute) and e.value.attr.value == "shape":
            return INT  # x.shape[0]
        if isinstance(e, cst.Call):
            return self.call(e, active)
        return None

    def call(self, e: cst.Call, active) -> str | None:
        func = e.func
        builtin = func.value if isinstance(func, cst.Name) and func.value not in self.view.aliases \
            and func.value not in self.sources else None
        name = builtin or resolve(self.view, func)
        if name in _INT_CALLS or name in _NUMPY_INTS:
            return INT
        if name in _FLOAT_CALLS or name in _NUMPY_FLOATS:
            return FLOAT
        if name == "bool":
            return BOOL
        if name in ("min", "max", "abs") and e.args:
            return _join(self.expr(a.value, active) for a in e.args)
        return None


def _binary_of(op) -> cst.BaseBinaryOp:
    """The binary operator of an augmented assignment (`n += 1` adds as `n + 1` does)."""
    return getattr(cst, type(op).__name__.replace("Assign", ""))()


def per_call_kinds(view, fn: cst.FunctionDef) -> dict:
    """Name -> "int", "bool", "float" or None, for every name FN binds (its parameters included); a name bound
    once, to a tuple written out (`threadperblock = (tpb, tpb)`, a shared array's shape), -> that cst.Tuple,
    whose items the kernel reads as per-call values of their own."""
    kinds = _Kinds(view, fn)
    return {name: sources[0] if len(sources) == 1 and isinstance(sources[0], cst.Tuple) and sources[0].elements
            and not any(isinstance(el, cst.StarredElement) for el in sources[0].elements) else kinds.of(name)
            for name, sources in kinds.sources.items()}


class _IntegerUses(cst.CSTVisitor):
    """Names a function uses where Numba accepts only integers: range() bounds, indices, the shapes of shared
    and local arrays, and the operands of arithmetic there (`range(N * T)` makes N and T integers)."""

    def __init__(self):
        self.names: set = set()

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        if isinstance(func, cst.Name) and func.value == "range":
            for a in node.args:
                self.integers(a.value)
        elif isinstance(func, cst.Attribute) and func.attr.value == "array" and isinstance(func.value, cst.Attribute) \
                and func.value.attr.value in ("shared", "local"):  # cuda.shared.array(shape, dtype)
            for k, a in enumerate(node.args):
                if (k == 0 and a.keyword is None) or (a.keyword is not None and a.keyword.value == "shape"):
                    self.integers(a.value)
        return True

    def visit_SubscriptElement(self, node: cst.SubscriptElement) -> bool:
        if isinstance(node.slice, cst.Index):
            self.integers(node.slice.value)
        else:
            for part in (node.slice.lower, node.slice.upper, node.slice.step):
                if part is not None:
                    self.integers(part)
        return True

    def integers(self, e) -> None:
        if isinstance(e, cst.Name):
            self.names.add(e.value)
        elif isinstance(e, cst.BinaryOperation) and not isinstance(e.operator, cst.Divide):
            self.integers(e.left)
            self.integers(e.right)
        elif isinstance(e, cst.UnaryOperation) and not isinstance(e.operator, cst.Not):
            self.integers(e.expression)
        elif isinstance(e, cst.Tuple):
            for el in e.elements:
                self.integers(el.value)


def integer_uses(fn: cst.FunctionDef) -> set:
    visitor = _IntegerUses()
    fn.visit(visitor)
    return visitor.names


def per_call_note(info, fi, names: list):
    """The note a kernel made per call gets: what its template parameters are, and how it is launched."""
    enclosing = fi.enclosing.name.value if fi.enclosing is not None else "its enclosing function"
    listed = ", ".join(names)
    return info.reporter.make(fi.node.name, f"kernel '{fi.name}'", f"reads {listed} of '{enclosing}', which Numba "
                              "bakes into the kernel each call makes: template parameters here, launched from C++ "
                              f"as {fi.name}_launch<{listed}>(...); from Python, numba2cuda.load(kernel) on the "
                              "kernel a call made translates it with that call's values")


class PerCallLowerer:
    """Reads of a host function's per-call values in a kernel it makes: template parameters of the kernel."""

    def per_call_value(self, name: str, node) -> ir.Expr:
        enclosing = self.fn.enclosing.name.value if self.fn.enclosing is not None else "the enclosing function"
        what = (f"is a value of '{enclosing}' that each call computes: Numba compiles one kernel per call with it "
                "baked in")
        kind = self.info.per_call.get(name)
        if isinstance(kind, cst.Tuple):  # each item its own per-call value (or a constant)
            if name in self.integer_names():  # a shape: its items are integers where it is one
                self.integer_names().update(el.value.value for el in kind.elements if isinstance(el.value, cst.Name))
            return TupleValue([self.value(el.value) for el in kind.elements])
        if kind is None and name in self.integer_names():
            kind = INT  # Numba accepts only an integer where the kernel uses it
        if kind == FLOAT:
            raise Unsupported(node, f"closure variable '{name}'", f"{what}, and it is a float, which a C++ template "
                              "parameter (how the translation bakes in such values) cannot be",
                              f"pass '{name}' to the kernel as an argument")
        if kind is None:  # an array, a function, a number of a kind the source does not show: why it is unknown
            raise self.unknown_value(name, node)
        if name not in self.per_call_used:
            self.per_call_used[name] = (name, T.INT64 if kind == INT else T.BOOL)  # lower/names.py spells it in C
        c_name, ty = self.per_call_used[name]
        value = ir.Builtin(c_name, ty, ty)
        value.per_call, value.py_name = True, name  # lower/names.py may rename it
        return value

    def integer_names(self) -> set:
        if self.integer_uses is None:
            self.integer_uses = integer_uses(self.fn.node)
        return self.integer_uses
