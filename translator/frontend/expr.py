"""libcst expressions -> KernelIR expressions: literals, operators, comparisons, tuples, subscripts (names and
attributes: reads.py; calls: call.py)."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ..ir import nodes as ir
from ..ir import typesys as T
from ..errors import Unsupported
from .constants import Typed
from .names import resolve
from .recordfields import is_array_field, is_record
from ..ir.facts import decided_test, is_pure

BINOPS = {
    cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.FloorDivide: "//",
    cst.Modulo: "%", cst.Power: "**", cst.LeftShift: "<<", cst.RightShift: ">>", cst.BitAnd: "&",
    cst.BitOr: "|", cst.BitXor: "^",
}
AUG_OPS = {
    cst.AddAssign: "+", cst.SubtractAssign: "-", cst.MultiplyAssign: "*", cst.DivideAssign: "/",
    cst.FloorDivideAssign: "//", cst.ModuloAssign: "%", cst.PowerAssign: "**", cst.LeftShiftAssign: "<<",
    cst.RightShiftAssign: ">>", cst.BitAndAssign: "&", cst.BitOrAssign: "|", cst.BitXorAssign: "^",
}
COMPARES = {cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">", cst.GreaterThanEqual: ">=",
            cst.Equal: "==", cst.NotEqual: "!="}

UNSUPPORTED_EXPRS = {
    cst.ListComp: ("list comprehension", "kernels cannot build Python lists", "write a for loop that fills a cuda.local.array"),
    cst.GeneratorExp: ("generator expression", "kernels cannot build Python generators", "write a for loop"),
    cst.SetComp: ("set comprehension", "kernels cannot build Python sets", "write a for loop"),
    cst.DictComp: ("dict comprehension", "kernels cannot build Python dicts", "write a for loop"),
    cst.Lambda: ("lambda", "kernels cannot create functions", "define a @cuda.jit(device=True) function"),
    cst.Dict: ("dict literal", "kernels cannot use dicts", "use scalars or arrays"),
    cst.Set: ("set literal", "kernels cannot use sets", "use scalars or arrays"),
    cst.List: ("list literal", "kernels cannot build Python lists", "use a tuple of constants or cuda.local.array"),
    cst.FormattedString: ("f-string", "strings exist only as print() arguments", "print the values: print('x =', x)"),
    cst.SimpleString: ("string", "strings exist only as print() arguments, and as a local's values only compared "
                       "with == or != (a tag of up to 8 bytes)", "use an integer flag, or compare the name only"),
    cst.ConcatenatedString: ("string", "strings exist only as print() arguments, and as a local's values only "
                             "compared with == or != (a tag of up to 8 bytes)", "use an integer flag, or compare the "
                             "name only"),
    cst.NamedExpr: ("assignment expression (:=)", "not supported", "assign on its own line first"),
    cst.Await: ("await", "kernels are not coroutines", "remove it"),
    cst.Yield: ("yield", "kernels cannot be generators", "write results into an output array"),
    cst.StarredElement: ("starred expression", "not supported", "pass arguments one by one"),
    cst.Ellipsis: ("Ellipsis", "not supported", "index every dimension explicitly"),
}


@dataclass
class Dim3:
    """The compile-time object behind cuda.threadIdx (and a local alias such as `tid = cuda.threadIdx`)."""
    c_name: str


@dataclass
class TypeValue:
    """A scalar type used as a value: np.float32, arr.dtype, arr.dtype.type (callable as a cast)."""
    scalar: T.Scalar


@dataclass
class GridGroup:
    """cuda.cg.this_grid(): the whole grid, whose only method Numba has is sync()."""


@dataclass
class GridSync:
    """`g.sync` of a GridGroup, before it is called."""


@dataclass
class ArraySelect:
    """`x if c else y` of two arrays: only an assignment can take it (the name then points at either)."""
    cond: ir.Expr
    then: ir.ArrayVar
    orelse: ir.ArrayVar


@dataclass
class TupleValue:
    """A tuple known at translation time: m.shape, cuda.grid(2), (TILE, TILE), or a literal of pure values."""
    items: list
    names: tuple = ()  # a namedtuple parameter's field names: `x.r` reads its item r


def no_length(arr: ir.ArrayVar, node, asked: str) -> Unsupported:
    """The error for the length of a CPointer (`len(x)`, `x.shape`, a slice of it)."""
    return Unsupported(node, f"{asked} of '{arr.name}'", "a CPointer carries no length (Numba gives it none either)",
                       "pass the length as an argument of its own, as numba-cuda's ex_cpointer does")


def const_expr(value, node=None) -> ir.Expr:
    if isinstance(value, Typed):
        e = ir.Const(value.value, value.type)
    elif isinstance(value, bool):
        e = ir.Const(value, T.BOOL)
    elif isinstance(value, int):
        if not -2**63 <= value < 2**64:
            raise Unsupported(node, "integer constant", f"{value} does not fit in 64 bits")
        e = ir.Const(value, T.INT64 if value < 2**63 else T.UINT64)
    elif isinstance(value, float):
        e = ir.Const(value, T.FLOAT64)
    elif isinstance(value, complex):
        e = ir.Const(value, T.COMPLEX128)
    else:
        raise Unsupported(node, "constant", f"a {type(value).__name__} constant cannot be used here")
    e.node = node
    return e


class ExprLowerer:
    """Shared by kernels and device functions; `self.scope` maps local names to what they are."""

    def __init__(self, info, fn_info):
        self.info = info
        self.fn = fn_info
        self.scope: dict = {}  # name -> ArrayVar | Dim3 | TupleValue
        self.tag_strings: dict = {}  # id(string literal) -> its number, for string tags (strtags.py)
        self.named_tuple_params: set = set()  # tuple parameters named by a namedtuple of the source (reads.py)
        self.scalar_names: set = set()  # names assigned as scalars anywhere in the function
        self.helpers: set = set()
        self.foreign: dict = {}  # symbol -> frontend.ffi.Foreign of the cuda.declare_device functions it calls
        self.counters: set = set()  # loop counters the translator made, which run from 0 up
        self.optionals: dict = {}  # a name bound to an Optional result -> the local saying it is not None
        self.none_locals: set = set()  # optionals that are locals set to None (`x = None`), not results
        self.unwrapped: set = set()  # Optional names a test said are not None, where that holds
        self.none_guards: list = []  # Optional names the statement being lowered uses whatever they hold
        self.hoisted: list = []  # statements the statement being lowered needs first (a tuple result's call)
        self.conditional = 0  # > 0 in an operand that may not be evaluated (`a and b`'s b, `x if c else y`)

    # ------------------------------------------------------------ entry
    def expr(self, node) -> ir.Expr:
        value = self.value(node)
        if isinstance(value, ir.ArrayVar):
            spelt = value.name or self.info.code(node)  # a row, `inp[i]`, has no name of its own
            raise Unsupported(node, "array used as a value", f"'{spelt}' is an array here",
                              "index it, or pass it to a device function")
        if isinstance(value, TypeValue):
            raise Unsupported(node, f"type {value.scalar} used as a number", "a type can be called to convert a value",
                              f"write {value.scalar}(x)")
        if isinstance(value, ir.Call) and value.intrinsic.tuple_result:
            raise Unsupported(node, f"{value.intrinsic.key}()", "returns a tuple", "unpack it: a, b = ...")
        if isinstance(value, ir.DeviceCall) and value.optional:
            if self.fn.is_device or self.conditional:
                raise Unsupported(node, f"call to {value.func_name}()", "it returns None on some paths (Numba makes "
                                  "the result an Optional), and a None here would not stop the thread as Numba's "
                                  "exception does", "assign it to a name first, and test `name is not None`")
            # `out[i] = first_at_least(...)` in a kernel: Numba's cast of a None raises, and the thread stops there
            held = self.fresh_name(f"{value.func_name}_ret", 1)
            self.optionals[held] = self.fresh_name(f"{held}_is_some", 1)
            kept = ir.TupleCall(targets=[ir.Name(held), ir.Name(self.optionals[held])], call=value)
            kept.node = node
            self.hoisted.append(kept)
            self.none_guards.append(held)
            return ir.Name(held)
        if isinstance(value, ArraySelect):
            raise Unsupported(node, "conditional array", "an array chosen by a condition can only be assigned to a name",
                              "a = x if c else y, then use a")
        if isinstance(value, (GridGroup, GridSync)):
            raise Unsupported(node, "grid group used as a value", "it can only be synchronised", "call g.sync()")
        if isinstance(value, (Dim3, TupleValue)):
            raise Unsupported(node, "tuple used as a value", "tuples can only be unpacked or indexed with a constant",
                              "unpack it: a, b = ...")
        return value

    def value(self, node):
        """An ir.Expr, or a translation-time object (array, dim3, tuple)."""
        tag = self.tag_strings.get(id(node))
        if tag is not None:  # a string tag's literal (strtags.py): the number its bytes spell
            e = ir.Const(tag, T.UINT64)
            e.node, e.hex = node, True
            return e
        for cls, (construct, message, hint) in UNSUPPORTED_EXPRS.items():
            if isinstance(node, cls):
                raise Unsupported(node, construct, message, hint)
        method = getattr(self, "lower_" + type(node).__name__, None)
        if method is None:
            raise Unsupported(node, type(node).__name__, "this expression is not supported in kernels")
        result = method(node)
        if isinstance(result, ir.Expr) and result.node is None:
            result.node = node
        return result

    # ------------------------------------------------------------ leaves
    def lower_Integer(self, node):
        e = const_expr(node.evaluated_value, node)
        if node.value.lower().startswith("0x"):
            e.hex = True  # a mask written in hex stays in hex
        return e

    def lower_Float(self, node):
        return const_expr(node.evaluated_value, node)

    def lower_Imaginary(self, node):
        return const_expr(complex(node.evaluated_value), node)

    # ------------------------------------------------------------ operators
    def lower_BinaryOperation(self, node):
        op = BINOPS.get(type(node.operator))
        if op is None:
            raise Unsupported(node, "matrix multiplication (@)", "not supported on arrays in kernels",
                              "write the loops, as in kernels/matmul_naive.py")
        return ir.BinOp(op, self.expr(node.left), self.expr(node.right))

    def lower_UnaryOperation(self, node):
        op = {cst.Minus: "-", cst.Plus: "+", cst.BitInvert: "~", cst.Not: "not"}[type(node.operator)]
        operand = self.expr(node.expression)
        if op == "-" and isinstance(operand, ir.Const) and operand.type.kind in "if" and not operand.name:
            return const_expr(-operand.value, node)
        return ir.Unary(op, operand)

    def lower_BooleanOperation(self, node):
        op = "and" if isinstance(node.operator, cst.And) else "or"
        left = self.expr(node.left)
        self.conditional += 1
        right = self.expr(node.right)
        self.conditional -= 1
        values = []
        for v in (left, right):
            values.extend(v.values if isinstance(v, ir.BoolOp) and v.op == op else [v])
        return ir.BoolOp(op, values)

    def lower_Comparison(self, node):
        none_test = self.none_test(node)
        if none_test is not None:
            return none_test
        left = self.expr(node.left)
        parts = []
        for i, target in enumerate(node.comparisons):
            op = COMPARES.get(type(target.operator))
            if op is None and isinstance(target.operator, (cst.In, cst.NotIn)) and len(node.comparisons) == 1:
                return self.membership(left, target, node)
            if op is None and isinstance(target.operator, (cst.Is, cst.IsNot)) and len(node.comparisons) == 1:
                # `flag is True`: the typer keeps it for two booleans (numba-cuda's bool_is_impl compares values)
                return ir.Compare("is" if isinstance(target.operator, cst.Is) else "is not", left,
                                  self.expr(target.comparator))
            if op is None:
                words = {cst.In: "in", cst.NotIn: "not in", cst.Is: "is", cst.IsNot: "is not"}
                name = words.get(type(target.operator), type(target.operator).__name__)
                raise Unsupported(target.operator, f"'{name}' comparison", "only <, <=, >, >=, ==, != compare numbers",
                                  "compare values with == or !=")
            right = self.expr(target.comparator)
            if i + 1 < len(node.comparisons) and not is_pure(right):
                raise Unsupported(target.comparator, "chained comparison with a call in the middle",
                                  "the middle operand would be evaluated twice", "assign it to a variable first")
            parts.append(ir.Compare(op, left, right))
            left = right
        return parts[0] if len(parts) == 1 else ir.BoolOp("and", parts)

    def membership(self, left, target, node):
        """`n in (2, 3)` (a game of life's rule), `k not in OFFS`: Numba compares with each item of the tuple. A list
        of values searched at once (`neighbors not in [3, 4]`) is read as the tuple: no list is built."""
        if isinstance(target.comparator, cst.List) and not any(isinstance(e, cst.StarredElement)
                                                                for e in target.comparator.elements):
            items = TupleValue([self.value(e.value) for e in target.comparator.elements])
        else:
            items = self.value(target.comparator)
        negated = isinstance(target.operator, cst.NotIn)
        if isinstance(items, TupleValue):
            items = TupleValue([const_expr(v, node) if isinstance(v, (int, float)) else v for v in items.items])
        if not isinstance(items, TupleValue) or not items.items or \
                not all(isinstance(v, ir.Expr) and not isinstance(v, ir.ArrayVar) for v in items.items):
            raise Unsupported(target.operator, f"'{'not in' if negated else 'in'}' comparison", "only a tuple of "
                              "numbers can be searched here",
                              "compare with each value (n == 2 or n == 3), or loop over the array")
        if not is_pure(left):
            raise Unsupported(node.left, "'in' comparison with a call on its left", "the left side would be "
                              "evaluated once per item", "assign it to a variable first")
        parts = [ir.Compare("!=" if negated else "==", left, item) for item in items.items]
        return parts[0] if len(parts) == 1 else ir.BoolOp("and" if negated else "or", parts)

    def lower_IfExp(self, node):
        cond = self.expr(node.test)
        decided = decided_test(cond)
        if decided is not None:  # as for an if statement: Numba never compiles the other value
            return self.value(node.body if decided else node.orelse)
        self.conditional += 1
        then, orelse = self.value(node.body), self.value(node.orelse)
        self.conditional -= 1
        if isinstance(then, ir.ArrayVar) and isinstance(orelse, ir.ArrayVar):
            return ArraySelect(cond, then, orelse)
        return ir.IfExp(cond, self.expr(node.body) if not isinstance(then, ir.Expr) else then,
                        self.expr(node.orelse) if not isinstance(orelse, ir.Expr) else orelse)

    def lower_Tuple(self, node):
        return TupleValue([self.value(el.value) for el in node.elements])

    # ------------------------------------------------------------ subscripts
    def lower_Subscript(self, node):
        base = self.value(node.value)
        if isinstance(base, ir.DeviceCall):  # `scaled(3.0, p)[1]`: its tuple, kept in locals first
            base = self.tuple_result(base, node.value)
        if isinstance(base, TupleValue):
            return self.tuple_subscript(base, node)
        if isinstance(base, ir.Load) and base.array.dtype.name in T.RECORD_FIELDS:
            return self.record_field(base, node)
        if is_record(base):  # a["x"] of a record: its field, as a.x
            return self.record_member(base, self.record_key(node), node)
        if is_array_field(base):  # r.h[k]: an element of a record's array field
            return self.array_field_element(base, node)
        if not isinstance(base, ir.ArrayVar):
            raise Unsupported(node, "subscript", "only arrays and constant tuples can be indexed")
        if any(isinstance(el.slice, cst.Slice) for el in node.slice):
            return self.slice_view(base, node)
        return self.index_array(base, self.index_list(node), node)

    def record_key(self, node) -> str:
        """The field a record is subscripted with: a string, as Numba requires (a literal or a constant)."""
        key = node.slice[0].slice.value if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
            else None
        if isinstance(key, cst.SimpleString):
            return key.evaluated_value
        value = self.value(key) if key is not None else None
        if isinstance(value, ir.Const) and isinstance(value.value, str):
            return value.value
        raise Unsupported(node, "record subscript", "a record is subscripted by a field's name, a string Numba "
                          "knows when it compiles", f'write {self.info.code(node.value)}["name"] or '
                          f"{self.info.code(node.value)}.name")

    def record_field(self, record: ir.Load, node):
        """`states[i]["s0"]` (an Ising model's random bits): a field of a record element, read by name."""
        fields = T.RECORD_FIELDS[record.array.dtype.name]
        key = node.slice[0].slice.value if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
            else None
        name = key.evaluated_value if isinstance(key, cst.SimpleString) else None
        if name not in fields:
            raise Unsupported(node, "record field", f"{record.array.dtype} has the fields "
                              f"{', '.join(repr(f) for f in fields)}", f'read one by name: {self.info.code(node.value)}'
                              f'["{next(iter(fields))}"]')
        return ir.Member(record, name)


def canonical_call(info, func_node) -> str | None:
    canon = resolve(info, func_node)
    if canon is None and isinstance(func_node, cst.Name):
        return func_node.value
    return canon


__all__ = ["ExprLowerer", "ArraySelect", "Dim3", "GridGroup", "GridSync", "TupleValue", "TypeValue", "const_expr",
           "no_length", "canonical_call", "AUG_OPS"]
