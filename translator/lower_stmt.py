"""libcst function bodies -> KernelIR statements (untyped; the typer runs next)."""

from __future__ import annotations

import libcst as cst

from . import ir
from . import typesys as T
from .errors import Unsupported
from .constants import ConstArray
from .names import resolve, scalar_type_of_name
from .lower_call import CallLowerer
from .irfacts import const_int, is_pure, mentions
from .lower_expr import AUG_OPS, Dim3, ExprLowerer, TupleValue, const_expr
from .scan import assignment_counts, bound_names, returns_tuple

UNSUPPORTED_STMTS = {
    cst.Raise: ("raise statement", "kernels cannot raise exceptions", "write an error flag into an output array"),
    cst.Try: ("try statement", "kernels cannot handle exceptions", "check the condition with if"),
    cst.With: ("with statement", "context managers are not supported in kernels", "remove the with block"),
    cst.Assert: ("assert statement", "asserts are not translated", "check with if and write an error flag"),
    cst.Del: ("del statement", "kernel variables cannot be deleted", "remove it"),
    cst.Global: ("global statement", "kernels cannot rebind module globals", "pass an output array"),
    cst.Nonlocal: ("nonlocal statement", "kernels cannot rebind outer variables", "pass an output array"),
    cst.Import: ("import statement", "imports belong at module level", "move the import to the top of the file"),
    cst.ImportFrom: ("import statement", "imports belong at module level", "move the import to the top of the file"),
    cst.FunctionDef: ("nested function", "functions cannot be defined inside kernels",
                      "define a @cuda.jit(device=True) function at module level"),
    cst.ClassDef: ("class definition", "classes cannot be defined inside kernels", "use scalars and arrays"),
    cst.AnnAssign: ("annotated assignment", "local variable annotations are not supported",
                    "write x = float32(value) to choose the type"),
    cst.Match: ("match statement", "not supported", "use if/elif/else"),
}
ARRAY_MAKERS = ("cuda.shared.array", "cuda.local.array", "cuda.const.array_like")


class Poisoned:
    """A name whose definition was already reported; its uses raise Reported, which is not reported again."""

    def __init__(self, name):
        self.name = name


class Reported(Exception):
    pass


class FunctionLowerer(CallLowerer, ExprLowerer):
    def __init__(self, info, fn_info, param_types: list):
        super().__init__(info, fn_info)
        self.param_types = param_types
        self.assign_counts = assignment_counts(fn_info.node)
        self.scalar_names = set(self.assign_counts)
        self.arrays: list[ir.ArrayVar] = []
        self.tmp_count = 0
        self.loop_depth = 0

    # ------------------------------------------------------------ function
    def lower(self) -> ir.Function:
        params = []
        for name, ty in zip(self.fn.params, self.param_types):
            if isinstance(ty, T.Array):
                arr = ir.ArrayVar(name, ty.dtype, [None] * ty.ndim, "param")
                self.scope[name] = arr
                self.arrays.append(arr)
                params.append(ir.Param(name, ty, arr))
            else:
                if self.assign_counts.get(name):
                    self.scalar_names.add(name)
                params.append(ir.Param(name, ty))
        self.param_names = {p.name for p in params if p.array is None}
        self.scalar_names |= self.param_names
        body = self.block(self.fn.node.body)
        return ir.Function(self.fn.name, not self.fn.is_device, params, body, node=self.fn.node,
                           options=dict(self.fn.options))

    def block(self, body) -> list:
        if isinstance(body, cst.SimpleStatementSuite):
            stmts = [body]
        else:
            stmts = body.body
        out = []
        for stmt in stmts:
            try:
                out.extend(self.statement(stmt))
            except Unsupported as exc:
                self.info.reporter.add_unsupported(exc)
            except Reported:
                pass
        return out

    def statement(self, stmt) -> list:
        for cls, (construct, message, hint) in UNSUPPORTED_STMTS.items():
            if isinstance(stmt, cls):
                self.poison([stmt.name.value] if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) else [])
                raise Unsupported(stmt, construct, message, hint)
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            out = []
            for small in stmt.body:
                try:
                    for cls, (construct, message, hint) in UNSUPPORTED_STMTS.items():
                        if isinstance(small, cls):
                            raise Unsupported(small, construct, message, hint)
                    for s in self.small_statement(small):
                        s.node = s.node or small
                        out.append(s)
                except Unsupported:
                    self.poison(bound_names(small))  # later uses of these names would only echo this error
                    raise
            return out
        method = getattr(self, "stmt_" + type(stmt).__name__, None)
        if method is None:
            raise Unsupported(stmt, type(stmt).__name__, "this statement is not supported in kernels")
        result = method(stmt)
        for s in result:
            s.node = s.node or stmt
        return result

    def small_statement(self, small) -> list:
        if isinstance(small, cst.Pass):
            return []
        if isinstance(small, cst.Expr):
            return self.expression_statement(small)
        if isinstance(small, cst.Assign):
            out = []
            for target in small.targets:
                out.extend(self.assign(target.target, small.value, small))
            return out
        if isinstance(small, cst.AugAssign):
            return self.aug_assign(small)
        if isinstance(small, cst.Return):
            return self.return_(small)
        if isinstance(small, cst.Break):
            self._in_loop(small, "break")
            return [ir.Break()]
        if isinstance(small, cst.Continue):
            self._in_loop(small, "continue")
            return [ir.Continue()]
        raise Unsupported(small, type(small).__name__, "this statement is not supported in kernels")

    def poison(self, names) -> None:
        for name in names:
            self.scope[name] = Poisoned(name)

    def _in_loop(self, node, word):
        if self.loop_depth == 0:
            raise Unsupported(node, f"'{word}' outside a loop", "is only valid inside for/while")

    # ------------------------------------------------------------ expressions as statements
    def expression_statement(self, small: cst.Expr) -> list:
        value = small.value
        if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)):
            return []  # a docstring or string used as a comment
        if isinstance(value, cst.Call) and resolve(self.info, value.func) is None \
                and isinstance(value.func, cst.Name) and value.func.value == "print" \
                and "print" not in self.scalar_names:
            return [self.print_(value)]
        if not isinstance(value, cst.Call):
            raise Unsupported(small, "expression statement", "has no effect", "assign it or remove it")
        return [ir.ExprStmt(value=self.expr_or_void(value))]

    def expr_or_void(self, node):
        v = self.value(node)
        if not isinstance(v, ir.Expr):
            raise Unsupported(node, "expression statement", "has no effect", "remove it")
        return v

    def print_(self, call: cst.Call) -> ir.Print:
        items = []
        for a in call.args:
            if a.keyword is not None:
                raise Unsupported(a, f"print(..., {a.keyword.value}=...)", "print keywords are not supported",
                                  "print the values only; items are separated by spaces")
            if isinstance(a.value, (cst.SimpleString, cst.ConcatenatedString)):
                items.append(ir.StringLit(a.value.evaluated_value))
            else:
                items.append(self.expr(a.value))
        return ir.Print(items=items)

    # ------------------------------------------------------------ assignments
    def assign(self, target, value_node, stmt) -> list:
        if isinstance(target, cst.Name):
            return self.assign_name(target, value_node)
        if isinstance(target, (cst.Tuple, cst.List)):
            return self.assign_tuple(target, value_node)
        if isinstance(target, cst.Subscript):
            load = self.value(target)
            if not isinstance(load, ir.Load):
                raise Unsupported(target, "assignment to a slice or row", "assign element by element",
                                  "loop over the elements: a[i, j] = ...")
            self._mark_written(load.array, target)
            return [ir.Store(target=load, value=self.expr(value_node))]
        if isinstance(target, cst.Attribute):
            raise Unsupported(target, "attribute assignment", "kernels cannot set attributes")
        raise Unsupported(target, "assignment target", "only names, tuples of names and array elements")

    def _mark_written(self, arr, node):
        root = arr
        while root.base is not None:
            root = root.base
        if root.kind == "const":
            raise Unsupported(node, "write to a constant array", f"'{root.name}' lives in constant memory")
        root.written = True

    def assign_name(self, target: cst.Name, value_node) -> list:
        name = target.value
        maker = value_node.func if isinstance(value_node, cst.Call) else None
        canon = resolve(self.info, maker) if maker is not None else None
        if canon in ARRAY_MAKERS:
            try:
                return self.declare_array(name, canon, value_node)
            except Unsupported:
                self.scope[name] = Poisoned(name)
                raise
        if isinstance(self.scope.get(name), Poisoned):
            raise Reported(name)
        value = self.value(value_node)
        if isinstance(value, ir.DeviceCall) and returns_tuple(self.info.functions[value.func_name].node):
            self.poison([name])
            raise Unsupported(target, "tuple variable", f"must be unpacked where it is made: "
                              f"'{value.func_name}' returns several values",
                              f"unpack it: a, b = {value.func_name}(...)")
        if isinstance(value, ir.Expr):
            if name in self.scope:
                raise Unsupported(target, f"'{name}' reassigned", "it already names an array or a cuda object",
                                  "use a new name")
            return [ir.Assign(target=ir.Name(name), value=value)]
        return self.bind(name, value, target)

    def bind(self, name, value, node) -> list:
        """Give a translation-time object (array, view, dim3, tuple) a name."""
        if self.assign_counts.get(name, 0) > 1 or name in self.scope:
            raise Unsupported(node, f"'{name}' assigned more than once",
                              "names of arrays, views and tuples must be assigned exactly once", "use a new name")
        self.scalar_names.discard(name)
        if isinstance(value, ir.ArrayVar) and value.kind == "view" and not value.name:
            value.name = name
            self.scope[name] = value
            self.arrays.append(value)
            return [ir.ArrayDecl(array=value)]
        if isinstance(value, TupleValue) and not all(is_stable(v) for v in value.items):
            raise Unsupported(node, "tuple variable", "must be unpacked where it is made: its values could change "
                              "before they are read", "write a, b = ... instead")
        self.scope[name] = value
        return []

    def declare_array(self, name, canon, call: cst.Call) -> list:
        args = [a.value for a in call.args if a.keyword is None]
        kwargs = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        if canon == "cuda.const.array_like":
            if len(args) != 1 or not isinstance(args[0], cst.Name) or not isinstance(
                    self.info.constants.get(args[0].value), ConstArray):
                raise Unsupported(call, "cuda.const.array_like()", "needs a module-level constant array",
                                  "DATA = np.array([...], dtype=np.float32) at module level")
            const = self.info.constants[args[0].value]
            # the C array keeps the module constant's name; the local name is only an alias of it
            arr = ir.ArrayVar(args[0].value, const.dtype, [const_expr(s) for s in const.shape], "const", c_dims=True)
            arr.const_values = const.values
            arr.const_name = args[0].value
        else:
            shape_node = args[0] if args else kwargs.get("shape")
            dtype_node = args[1] if len(args) > 1 else kwargs.get("dtype")
            if shape_node is None or dtype_node is None:
                raise Unsupported(call, f"{canon}()", "needs a shape and a dtype", f"{canon}(shape, dtype=float32)")
            dtype = scalar_type_of_name(resolve(self.info, dtype_node))
            if dtype is None:
                raise Unsupported(dtype_node, "array dtype", "must be a NumPy or Numba scalar type",
                                  "use np.float32, float32, np.int32, ...")
            shape = self.value(shape_node)
            dims = shape.items if isinstance(shape, TupleValue) else [shape]
            values = [const_int(d) if isinstance(d, ir.Expr) else None for d in dims]
            if any(v is None for v in values):
                raise Unsupported(shape_node, f"{canon}() shape",
                                  "must be integer constants (literals, module-level constants, or arithmetic on them)",
                                  "use cuda.shared.array(0, dtype) for a size chosen at launch")
            if canon == "cuda.shared.array" and len(dims) == 1 and values[0] == 0:
                arr = ir.ArrayVar(name, dtype, [None], "dynamic")
            else:
                if any(v <= 0 for v in values):
                    raise Unsupported(shape_node, f"{canon}() shape", "dimensions must be positive")
                kind = "shared" if canon == "cuda.shared.array" else "local"
                arr = ir.ArrayVar(name, dtype, dims, kind, c_dims=True)
        if self.assign_counts.get(name, 0) > 1 or name in self.scope:
            raise Unsupported(call, f"'{name}' assigned more than once", "array names must be assigned exactly once",
                              "use a new name")
        self.scalar_names.discard(name)
        self.scope[name] = arr
        self.arrays.append(arr)
        return [ir.ArrayDecl(array=arr)]

    def assign_tuple(self, target, value_node) -> list:
        names = []
        for el in target.elements:
            if not isinstance(el.value, cst.Name):
                raise Unsupported(el.value, "tuple target", "only names can be unpacked into", "a, b = ...")
            names.append(el.value)
        if isinstance(value_node, (cst.Tuple, cst.List)):
            values = [self.value(el.value) for el in value_node.elements]
        else:
            v = self.value(value_node)
            if isinstance(v, ir.DeviceCall):
                if any(n.value in self.scope for n in names):
                    raise Unsupported(target, "tuple target", "cannot rebind an array or cuda object")
                return [ir.TupleCall(targets=[ir.Name(n.value) for n in names], call=v)]
            if not isinstance(v, TupleValue):
                raise Unsupported(value_node, "tuple unpacking", "the right side is not a tuple")
            values = v.items
        if len(values) != len(names):
            raise Unsupported(target, "tuple unpacking", f"{len(names)} names for {len(values)} values")
        return self.unpack(names, values)

    def unpack(self, names, values) -> list:
        out, pending = [], []
        targets = {n.value for n in names}
        needs_temps = len(names) > 1 and any(
            isinstance(v, ir.Expr) and mentions(v, targets) for v in values)
        for n, v in zip(names, values):
            if isinstance(self.scope.get(n.value), Poisoned):
                continue
            if not isinstance(v, ir.Expr):
                out.extend(self.bind(n.value, v, n))
            elif needs_temps:
                tmp = self.new_temp()
                out.append(ir.Assign(target=ir.Name(tmp), value=v))
                pending.append(ir.Assign(target=ir.Name(n.value), value=ir.Name(tmp)))
            else:
                out.append(ir.Assign(target=ir.Name(n.value), value=v))
        return out + pending

    def new_temp(self) -> str:
        name = f"tmp{self.tmp_count}_"
        self.tmp_count += 1
        self.scalar_names.add(name)
        return name

    def aug_assign(self, small: cst.AugAssign) -> list:
        op = AUG_OPS[type(small.operator)]
        if isinstance(small.target, cst.Name):
            cur = self.value(small.target)
            if not isinstance(cur, ir.Name):
                raise Unsupported(small.target, "augmented assignment", "only scalar variables and array elements")
            return [ir.Assign(target=ir.Name(small.target.value), value=ir.BinOp(op, cur, self.expr(small.value)))]
        if isinstance(small.target, cst.Subscript):
            load = self.value(small.target)
            if not isinstance(load, ir.Load):
                raise Unsupported(small.target, "augmented assignment to a slice", "assign element by element")
            if not all(is_pure(i) for i in load.indices):
                raise Unsupported(small.target, "augmented assignment with a call in the index",
                                  "the index would be evaluated twice", "assign the index to a variable first")
            self._mark_written(load.array, small.target)
            again = ir.Load(load.array, list(load.indices))
            return [ir.Store(target=load, value=ir.BinOp(op, again, self.expr(small.value)))]
        raise Unsupported(small.target, "augmented assignment target", "only names and array elements")

    def return_(self, small: cst.Return) -> list:
        if small.value is None:
            return [ir.Return()]
        if not self.fn.is_device:
            raise Unsupported(small, "return with a value in a kernel", "kernels cannot return values",
                              "write the result into an output array")
        if isinstance(small.value, cst.Tuple):
            return [ir.Return(values=[self.expr(el.value) for el in small.value.elements])]
        return [ir.Return(values=[self.expr(small.value)])]

    # ------------------------------------------------------------ compound statements
    def stmt_If(self, stmt: cst.If) -> list:
        cond = self.expr(stmt.test)
        body = self.block(stmt.body)
        orelse = []
        if isinstance(stmt.orelse, cst.If):
            orelse = self.statement(stmt.orelse)
        elif isinstance(stmt.orelse, cst.Else):
            orelse = self.block(stmt.orelse.body)
        return [ir.If(cond=cond, body=body, orelse=orelse)]

    def stmt_While(self, stmt: cst.While) -> list:
        if stmt.orelse is not None:
            raise Unsupported(stmt.orelse, "while ... else", "loop else clauses are not supported",
                              "use a flag variable")
        cond = self.expr(stmt.test)
        self.loop_depth += 1
        body = self.block(stmt.body)
        self.loop_depth -= 1
        return [ir.While(cond=cond, body=body)]

    def stmt_For(self, stmt: cst.For) -> list:
        if stmt.orelse is not None:
            raise Unsupported(stmt.orelse, "for ... else", "loop else clauses are not supported", "use a flag variable")
        if stmt.asynchronous is not None:
            raise Unsupported(stmt, "async for", "not supported")
        if not isinstance(stmt.target, cst.Name):
            raise Unsupported(stmt.target, "for loop target", "only a single name can be the loop variable",
                              "for i in range(n): ...")
        it = stmt.iter
        if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range"
                and "range" not in self.scalar_names):
            what = self.info.code(it.func) if isinstance(it, cst.Call) else "this iterable"
            raise Unsupported(it, f"for loop over {what}", "only range() loops are supported",
                              "loop over indices: for i in range(len(a)): x = a[i]")
        args = [a.value for a in it.args]
        if not 1 <= len(args) <= 3 or any(a.keyword is not None for a in it.args):
            raise Unsupported(it, "range()", "takes 1 to 3 positional arguments")
        values = [self.expr(a) for a in args]
        start, stop, step = (const_expr(0), values[0], const_expr(1)) if len(values) == 1 else \
            (values[0], values[1], values[2] if len(values) == 3 else const_expr(1))
        if isinstance(step, ir.Const) and step.value == 0:
            raise Unsupported(args[2], "range() step of 0", "Python raises ValueError for it")
        if stmt.target.value in self.scope:
            raise Unsupported(stmt.target, "loop variable", f"'{stmt.target.value}' already names an array")
        self.loop_depth += 1
        body = self.block(stmt.body)
        self.loop_depth -= 1
        loop = ir.ForRange(target=ir.Name(stmt.target.value), start=start, stop=stop, step=step, body=body)
        loop.given = len(values)  # Numba types the loop variable from the arguments actually written
        return [loop]


def is_stable(v) -> bool:
    """A value that reads the same wherever it is used: constants, thread geometry, shapes (m.shape, cuda.grid)."""
    if isinstance(v, TupleValue):
        return all(is_stable(x) for x in v.items)
    if isinstance(v, (Dim3, ir.ArrayVar)):
        return True
    if isinstance(v, (ir.Const, ir.Builtin, ir.ShapeOf)):
        return True
    if isinstance(v, ir.BinOp):
        return is_stable(v.left) and is_stable(v.right)
    if isinstance(v, (ir.Unary, ir.Cast)):
        return is_stable(v.operand if isinstance(v, ir.Unary) else v.value)
    return False
