"""libcst function bodies -> KernelIR statements (untyped; the typer runs next)."""

from __future__ import annotations

import libcst as cst

from ..ir import nodes as ir
from ..ir import typesys as T
from ..errors import Poisoned, Reported, Unsupported
from ..ir.facts import decided_test, mark_written
from .assign import AssignLowerer
from .call import CallLowerer
from .devcalls import DeviceCallLowerer
from .ffi import ForeignCallLowerer
from .debugger import DebuggerStatements
from .loops import ElementLoopLowerer
from .matching import MatchLowerer
from .optionals import OptionalLowerer, ends_in_jump
from .percall import PerCallLowerer
from .reads import NameReadLowerer
from .cachehints import CacheHintLowerer
from .recordfields import RecordLowerer
from .returns import ReturnLowerer
from .strtags import string_tag_literals
from .raising import RaiseLowerer
from .tupleassign import TupleAssignLowerer
from .shapes import nest, type_shape
from .tuples import TupleLowerer
from .views import ArrayViewLowerer
from .expr import ExprLowerer, TupleValue, const_expr
from .exprstmt import ExpressionStatementLowerer
from .names import resolve, scalar_type_of_name
from .scan import (always_leaves, assignment_counts, block_local_names, bound_names, declared_arrays, returned_params,
                   returns_optional, self_rebindings, straight_line_names)

UNSUPPORTED_STMTS = {
    cst.Try: ("try statement", "kernels cannot handle exceptions", "check the condition with if"),
    cst.With: ("with statement", "context managers are not supported in kernels", "remove the with block"),
    cst.Del: ("del statement", "kernel variables cannot be deleted", "remove it"),
    cst.Global: ("global statement", "kernels cannot rebind module globals", "pass an output array"),
    cst.Nonlocal: ("nonlocal statement", "kernels cannot rebind outer variables", "pass an output array"),
    cst.Import: ("import statement", "imports belong at module level", "move the import to the top of the file"),
    cst.ImportFrom: ("import statement", "imports belong at module level", "move the import to the top of the file"),
    cst.ClassDef: ("class definition", "classes cannot be defined inside kernels", "use scalars and arrays"),
}


class FunctionLowerer(AssignLowerer, TupleAssignLowerer, ExpressionStatementLowerer, MatchLowerer, CallLowerer, DeviceCallLowerer, ForeignCallLowerer,
                      ReturnLowerer, ElementLoopLowerer, ArrayViewLowerer, TupleLowerer, OptionalLowerer,
                      DebuggerStatements, RaiseLowerer, PerCallLowerer, RecordLowerer, CacheHintLowerer, NameReadLowerer,
                      ExprLowerer):
    def __init__(self, info, fn_info, param_types: list):
        super().__init__(info, fn_info)
        self.param_types = param_types
        self.assign_counts = assignment_counts(fn_info.node)
        self.tag_strings = string_tag_literals(fn_info.node, set(fn_info.params))
        for made in info.lambdas.values():  # `f = lambda v: ...` binds a function of the kernel, not a variable
            if self.defines(made):
                self.assign_counts.pop(made.name.value, None)
        arrays = declared_arrays(fn_info.node) | {p for p, t in zip(fn_info.params, param_types)
                                                  if isinstance(t, T.Array)}
        for name, count in self_rebindings(fn_info.node, self.returned_positions).items():
            if name in arrays:  # `M = vmuls(M, s)` binds M to the array it holds; a number returned is new
                self.assign_counts[name] -= count
        self.straight = straight_line_names(fn_info.node, self.assign_counts)  # name -> the block rebinding it
        self.block_local = block_local_names(fn_info.node)  # names no binding's value outlives its block
        self.optional_result = fn_info.is_device and returns_optional(fn_info.node)  # returns None on some paths
        # the parameters every `return X` gives back, if any (through `return g(x, n)` too)
        self.returned_params = returned_params(fn_info.node, info.functions)
        self.blocks: list = []  # the blocks being lowered, innermost last
        self.scalar_names = set(self.assign_counts)
        self.arrays: list[ir.ArrayVar] = []
        self.local_consts: dict = {}  # names bound once to an integer constant (for array shapes)
        self.prologue: list = []  # declarations that must precede the whole body
        self.cooperative = False  # calls cuda.cg.this_grid().sync(): launched cooperatively
        self.shape_consts: set = set()  # local constants an array shape used (`TPB = 16`)
        self.tmp_count = 0
        self.tuple_vars: dict = {}  # a tuple name assigned more than once -> the locals holding its items
        self.tuple_shapes: dict = {}  # such a name -> its tuple's shape (shapes.tuple_shape's spelling)
        self.debugger_names: set = set()  # pdb's names imported in the kernel (the simulator's debugging)
        self.loop_depth = 0
        self.per_call_used: dict = {}  # a per-call value the kernel reads -> (its C name, its type)
        self.captured: list = []  # device arrays of the module the kernel reads: parameters after its own
        self.integer_uses = None  # names the kernel uses where Numba accepts only integers, once asked
        self.rebound: set = set()  # names a binding of another kind was refused for (webs.split_webs may part them)

    # ------------------------------------------------------------ function
    def lower(self) -> ir.Function:
        params, complex_inits = [], []
        for name, ty in zip(self.fn.params, self.param_types):
            if isinstance(ty, T.Array):
                param = self.array_param(name, ty)
                self.scope[name] = param.array
                params.append(param)
            elif isinstance(ty, T.Tuple) or (not self.fn.is_device and isinstance(ty, T.Scalar) and ty.is_complex):
                if not self.fn.is_device and isinstance(ty, T.Tuple) and any(getattr(t, "is_complex", False) for t in ty.items):
                    raise Unsupported(self.fn.node.name, f"tuple kernel parameter '{name}' of complex numbers",
                                      "the launcher passes numbers as int64, float64 or bool",
                                      "pass the numbers as a 1-D complex array")
                # C takes a tuple's items, and a kernel's complex number as its parts (the launchers pass numbers
                # by value, a complex one as two), the body starting with name = complex(re, im)
                parts = ir.spread_param(name, ty, lambda c: c in self.assign_counts or c in self.fn.params
                                        or c in self.info.constants)
                if isinstance(ty, T.Tuple):
                    # a device function given a tuple of arrays (`rowsum((m[0, :], m[1, :]), j)`) takes each
                    # array as parameters of its own, as it takes a tuple's numbers
                    parts = [self.array_param(p.name, p.type, p.item_of) if isinstance(p.type, T.Array) else p
                             for p in parts]
                    params += parts
                    self.scope[name] = nest([p.array if p.array is not None else ir.Name(p.name) for p in parts],
                                            type_shape(ty))
                    self.scope[name].names = ty.names
                    continue
                params += parts
                complex_inits.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], cst.Call(
                    cst.Name("complex"), [cst.Arg(cst.Name(p.name)) for p in parts]))]))
                self.assign_counts[name] = self.assign_counts.get(name, 0) + 1
                self.scalar_names.add(name)
            else:
                if self.assign_counts.get(name):
                    self.scalar_names.add(name)
                params.append(ir.Param(name, ty))
        self.param_names = {p.name for p in params if p.array is None}
        self.scalar_names |= self.param_names
        inits = [s for line in complex_inits for s in self.statement(line)]
        for s in inits:
            s.node = self.fn.node  # the `def` line: where the parameter comes in
        body = inits + self.block(self.fn.node.body)
        if self.optional_result and not always_leaves(self.fn.node.body.body):
            # running off the end returns None (a search whose only return is in its loop): C must return it
            body.append(ir.Return(values=[const_expr(False, self.fn.node.name), const_expr(False, self.fn.node.name)]))
        body = self.prologue + body  # names bound to several arrays are declared up front (ArrayBind)
        flags = {self.optionals[name] for name in self.none_locals}  # `x = None`'s flag, where nothing asks it
        if flags and (unasked := flags - _names_read(body)):
            body = _drop_unread(body, unasked)
        while self.shape_consts & (unread := self.shape_consts - _names_read(body)):
            body = _drop_unread(body, unread)  # `ROWS = TPB // 8`: dropping ROWS leaves TPB unread too
            self.shape_consts -= unread
        for arr in self.arrays:
            if arr.kind == "alias" and arr.written:
                mark_written(arr)  # a write seen before a later binding reaches that array too
        fn = ir.Function(self.fn.name, not self.fn.is_device, params + self.captured, body, node=self.fn.node,
                         options=dict(self.fn.options))
        fn.captured = [p.name for p in self.captured]
        fn.cooperative = self.cooperative
        fn.per_call = [(py, c, ty) for py, (c, ty) in self.per_call_used.items()]
        return fn

    def array_param(self, name, ty, item_of=None) -> ir.Param:
        arr = ir.ArrayVar(name, ty.dtype, [None] * ty.ndim, "param")
        if ty.layout in ("W", "S"):  # a device function given a window takes its pitch (and step) as parameters
            arr.pitch = [None] + [ir.PitchOf(arr, d) for d in range(1, ty.ndim)]
        if ty.layout == "S":
            arr.step = ir.PitchOf(arr, ty.ndim)
        arr.pointer = ty.layout == "P"
        arr.fortran = ty.layout == "F"
        self.arrays.append(arr)
        return ir.Param(name, ty, arr, item_of=item_of)

    def block(self, body) -> list:
        if isinstance(body, cst.SimpleStatementSuite):
            stmts = [body]
        else:
            stmts = body.body
        out = []
        self.blocks.append(body)
        held = set(self.unwrapped)
        for stmt in stmts:
            try:
                out.extend(self.guarded_statement(stmt))
            except Unsupported as exc:
                if exc.node is None:  # raised where no expression was at hand: the statement locates it
                    exc.node = stmt
                self.info.reporter.add_unsupported(exc)
            except Reported:
                pass
        self.blocks.pop()
        self.unwrapped = held  # an early `if b is None: return` holds to the end of its block only
        return out

    def defines(self, fn: cst.FunctionDef) -> bool:
        """Whether FN (a def in this function's body, or the def a lambda there is read as) is the device function
        its name calls here (Discoverer.nested_functions made it)."""
        return getattr(self.info.functions.get(fn.name.value), "node", None) is fn

    def statement(self, stmt) -> list:
        if isinstance(stmt, cst.FunctionDef):
            name = stmt.name.value
            if self.defines(stmt) or name in self.info.failed_functions:
                return []  # a device function of its own (Discoverer.nested_functions), or its error where called
            self.poison([name])
            raise Unsupported(stmt, f"nested function '{name}'", "the kernel defines this name again below, and "
                              "numba2cuda translates one definition of each function defined in a kernel",
                              "give each definition its own name")
        for cls, (construct, message, hint) in UNSUPPORTED_STMTS.items():
            if isinstance(stmt, cls):
                self.poison([stmt.name.value] if isinstance(stmt, cst.ClassDef) else [])
                raise Unsupported(stmt, construct, message, hint)
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            out = []
            for small in stmt.body:
                try:
                    if self.debugger_import(small):
                        continue
                    stopped = self.raise_or_assert(small)
                    if stopped is not None:
                        for s in stopped:
                            s.node = small
                        out.extend(stopped)
                        continue
                    made = self.info.lambdas.get(getattr(small, "value", None))
                    if made is not None and self.defines(made):
                        continue  # `f = lambda v: ...`: a device function of its own, as a def would be
                    if isinstance(small, (cst.Global, cst.Nonlocal)) and not any(
                            item.name.value in self.assign_counts for item in small.names):
                        continue  # `nonlocal scale` of a name the kernel only reads: Numba reads it as it would
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
            if len(small.targets) > 1:
                return self.chained_assign(small)
            return self.assign(small.targets[0].target, small.value, small)
        if isinstance(small, cst.AnnAssign):
            return self.annotated_assignment(small)
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

    # ------------------------------------------------------------ assignments
    def annotated_assignment(self, small: cst.AnnAssign) -> list:
        """Python does not evaluate a local's annotation (`labels: torch.Tensor = ...`), so Numba, which reads the
        bytecode, never sees it: the assignment alone, and a note where the annotation looks like a type choice."""
        text = self.info.code(small.annotation.annotation)
        if scalar_type_of_name(resolve(self.info, small.annotation.annotation)) is not None:
            self.fn.notices.append(self.info.reporter.make(
                small.annotation, f"annotation '{text}'", "ignored, as Numba ignores a local's annotation: the "
                f"value's own type is kept (write {self.info.code(small.target)} = {text}(...) to choose it)"))
        return [] if small.value is None else self.assign(small.target, small.value, small)

    # ------------------------------------------------------------ compound statements
    def stmt_If(self, stmt: cst.If) -> list:
        if isinstance(stmt.test, cst.Name) and stmt.test.value not in self.scope \
                and stmt.test.value in self.info.constants and self.info.constants[stmt.test.value] is None:
            decided = False  # `if cond:` of a closure's `cond = None` (numba-cuda's test_functioncompiler_locals)
        else:
            cond = self.expr(stmt.test)
            decided = decided_test(cond)
        if decided is not None:  # Numba prunes the other branch before typing: it may not even type-check
            if decided:
                return self.block(stmt.body)
            if isinstance(stmt.orelse, cst.If):
                return self.statement(stmt.orelse)
            return self.block(stmt.orelse.body) if isinstance(stmt.orelse, cst.Else) else []
        held = set(self.unwrapped)
        self.unwrapped |= self.unwrapped_by(stmt.test)  # `if b is not None:` of an Optional b
        body = self.block(stmt.body)
        self.unwrapped = held
        if stmt.orelse is None and ends_in_jump(stmt.body):
            self.unwrapped |= self.unwrapped_by(stmt.test, positive=False)  # `if b is None: continue`
        orelse = []
        if isinstance(stmt.orelse, cst.If):
            orelse = self.statement(stmt.orelse)
        elif isinstance(stmt.orelse, cst.Else):
            self.unwrapped |= self.unwrapped_by(stmt.test, positive=False)
            orelse = self.block(stmt.orelse.body)
            self.unwrapped = held
        return [ir.If(cond=cond, body=body, orelse=orelse)]

    def stmt_While(self, stmt: cst.While) -> list:
        if stmt.orelse is not None:
            raise Unsupported(stmt.orelse, "while ... else", "loop else clauses are not supported",
                              "use a flag variable")
        self.conditional += 1  # the test runs again each time round: no one guard before the loop covers it
        cond = self.expr(stmt.test)
        self.conditional -= 1
        self.loop_depth += 1
        body = self.block(stmt.body)
        self.loop_depth -= 1
        return [ir.While(cond=cond, body=body)]

    def stmt_For(self, stmt: cst.For) -> list:
        if stmt.orelse is not None:
            raise Unsupported(stmt.orelse, "for ... else", "loop else clauses are not supported", "use a flag variable")
        if stmt.asynchronous is not None:
            raise Unsupported(stmt, "async for", "not supported")
        it = stmt.iter
        is_range = isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range" \
            and "range" not in self.scalar_names
        if isinstance(it, cst.List) and it.elements:
            # `for p in [a, b, c]`: numba-cuda types the list by its items' common type and iterates it without
            # building one (no allocation in its PTX, measured with compile_ptx), as a tuple of that type is
            items = cst.Tuple(it.elements)
            value = self.value(items)
            if isinstance(value, TupleValue):
                return self.tuple_loop(stmt, items, value)
        if not is_range:
            lowered = self.element_loop(stmt)
            if lowered is not None:
                return lowered
        if not isinstance(stmt.target, cst.Name):
            raise Unsupported(stmt.target, "for loop target", "only a single name can be the loop variable",
                              "for i in range(n): ...")
        if not is_range and isinstance(it, cst.Call) and self.info.code(it.func).endswith("literal_unroll"):
            return self.unrolled_loop(stmt, it)
        if isinstance(it, cst.List):
            raise Unsupported(it, "for loop over an empty list", "numba-cuda cannot type an empty list's items",
                              "iterate a tuple of the items")
        if not is_range and isinstance(it, cst.Call) and resolve(self.info, it.func) in ("numba.prange", "prange"):
            raise Unsupported(it, f"for loop over {self.info.code(it.func)}", "numba-cuda cannot type prange in a "
                              "kernel (its typing fails: \"Untyped global name 'prange'\"); each thread runs the "
                              "loop itself", "use range(...)")
        if not is_range:
            what = self.info.code(it.func) if isinstance(it, cst.Call) else "this iterable"
            raise Unsupported(it, f"for loop over {what}", "numba2cuda iterates range(), arrays, tuples, zip() and "
                              "enumerate() of them", "loop over indices: for i in range(len(a)): x = a[i]")
        args = [a.value for a in it.args]
        if not 1 <= len(args) <= 3 or any(a.keyword is not None for a in it.args):
            raise Unsupported(it, "range()", "takes 1 to 3 positional arguments")
        values = [self.expr(a) for a in args]
        start, stop, step = (const_expr(0), values[0], const_expr(1)) if len(values) == 1 else \
            (values[0], values[1], values[2] if len(values) == 3 else const_expr(1))
        if isinstance(step, ir.Const) and step.value == 0:
            raise Unsupported(args[2], "range() step of 0", "Python raises ValueError for it")
        if stmt.target.value in self.scope:
            raise self.rebinding(stmt.target, [stmt.target.value], "loop variable",
                                 f"'{stmt.target.value}' already names an array")
        self.loop_depth += 1
        body = self.block(stmt.body)
        self.loop_depth -= 1
        loop = ir.ForRange(target=ir.Name(stmt.target.value), start=start, stop=stop, step=step, body=body)
        loop.given = len(values)  # Numba types the loop variable from the arguments actually written
        return [loop]

    def rebinding(self, node, names, construct, message, hint="use a new name") -> Unsupported:
        """The error for binding NAMES to a value of another kind than they hold; the lowering's caller may give
        the bindings names of their own (Numba's SSA) and lower the function again."""
        self.rebound.update(names)
        return Unsupported(node, construct, message, hint)

    def fresh_name(self, name: str, bindings: int = 2) -> str:
        """NAME, or NAME_2, NAME_3 ...: a local the kernel does not use, bound BINDINGS times (2: a variable)."""
        base, k = name, 1
        while name in self.assign_counts or name in self.scope or name in self.info.constants:
            k += 1
            name = f"{base}_{k}"
        self.assign_counts[name] = bindings
        self.scalar_names.add(name)
        return name




def _names_read(body) -> set:
    """Names any expression of the body reads."""
    out, seen = set(), set()

    def visit(x):
        if id(x) in seen:
            return
        seen.add(id(x))
        if isinstance(x, ir.Name):
            out.add(x.name)
        if isinstance(x, (ir.Expr, ir.Stmt, ir.ArrayVar)):
            for child in vars(x).values():
                if isinstance(child, list):
                    for c in child:
                        visit(c)
                elif isinstance(child, (ir.Expr, ir.Stmt, ir.ArrayVar)) and not (isinstance(x, ir.Assign) and child is x.target):
                    visit(child)

    for s in body:
        visit(s)
    return out


def _drop_unread(body, names) -> list:
    """Without the assignments of NAMES: local constants only an array's shape read (the C shape is the number),
    flags of `x = None` no test reads; an unread C variable draws a compiler warning."""
    out = []
    for s in body:
        if isinstance(s, ir.Assign) and s.target.name in names:
            continue
        for key in ("body", "orelse"):
            if isinstance(getattr(s, key, None), list):
                setattr(s, key, _drop_unread(getattr(s, key), names))
        out.append(s)
    return out
