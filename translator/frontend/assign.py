"""Assignments in a function body (names, tuples, array elements, array declarations) -> KernelIR statements.

A mixin of stmt.FunctionLowerer: the statement walker dispatches here for `=` and `op=`.
"""

from __future__ import annotations

import libcst as cst
import numpy as np

from ..ir import intrinsics
from ..ir import nodes as ir
from ..ir import typesys as T
from .constants import CONSTANT_MEMORY_BYTES, ConstArray
from ..errors import Poisoned, Reported, Unsupported
from ..ir.facts import const_int, is_pure, mark_written, root_array
from .expr import AUG_OPS, ArraySelect, Dim3, TupleValue, TypeValue, const_expr
from .names import resolve, scalar_type_of_name
from .dtypes import module_records, named_record
from .recordfields import is_array_field, is_record
from .scan import find_nodes, returns_tuple
from .views import SLICE_COUNT, SLICE_LEN, SLICE_START

# calls whose result is a new array: `name = cuda.shared.array(...)` declares rather than assigns
ARRAY_MAKERS = ("cuda.shared.array", "cuda.local.array", "cuda.const.array_like")


class AssignLowerer:
    """Needs, from the class it is mixed into: info, scope, scalar_names, assign_counts, arrays, tmp_count, fresh_name,
    value(), expr(), poison()."""

    def assign(self, target, value_node, stmt) -> list:
        if isinstance(target, cst.Name) and isinstance(value_node, cst.Name) and value_node.value == "None" \
                and self.assign_counts.get(target.value, 0) > 1 and target.value not in self.scope \
                and (target.value not in self.optionals or target.value in self.none_locals):
            # `ang_dist = None` before a loop assigns it numbers (a Vincenty solver): Numba's Optional(float64),
            # a number and whether it is not None, as an Optional result is kept (optionals.py)
            name = target.value
            flag = self.optionals.get(name) or self.fresh_name(f"{name}_is_some")
            self.optionals[name] = flag
            self.unwrapped.discard(name)
            if name not in self.none_locals:  # said once, at its first `= None`
                self.none_locals.add(name)
                self.fn.notices.append(self.info.reporter.make(
                    stmt, f"'{name} = None'", "Numba types the name Optional: `is None` tests a flag kept beside "
                    "it; a kernel's statement that reads it while None stops the thread, as Numba's exception does, "
                    "and a device function or a branch reads the number last assigned"))
            # and a placeholder value, which only a read Numba would refuse sees: False unifies with any number
            return [ir.Assign(target=ir.Name(flag), value=const_expr(False, value_node)),
                    ir.Assign(target=ir.Name(name), value=const_expr(False, value_node))]
        if isinstance(target, cst.Name) and target.value in self.optionals:
            # `v = -1` of a name that was None or held a may-be-None result: a number now, not None from here on
            # (another may-be-None result sets the flag itself)
            flag = self.optionals[target.value]
            lowered = self.assign_name(target, value_node)
            if any(isinstance(s, ir.TupleCall) and any(t.name == flag for t in s.targets) for s in lowered):
                return lowered
            self.unwrapped.add(target.value)
            return lowered + [ir.Assign(target=ir.Name(flag), value=const_expr(True, value_node))]
        if isinstance(target, cst.Name):
            return self.assign_name(target, value_node)
        if isinstance(target, (cst.Tuple, cst.List)):
            return self.assign_tuple(target, value_node)
        if isinstance(target, cst.Subscript):
            load = self.value(target)
            if isinstance(load, ir.ArrayVar):
                return self.fill_view(load, target, value_node)
            if not isinstance(load, ir.Load):
                raise Unsupported(target, "assignment to a slice or row", "assign element by element",
                                  "loop over the elements: a[i, j] = ...")
            self.write_through(load.array, target)
            if is_array_field(load):
                return self.store_array_field(load, value_node)
            return [ir.Store(target=load, value=self.stored_value(load, value_node))]
        if isinstance(target, cst.Attribute):
            load = self.value(target)
            if isinstance(load, ir.Load) and load.field is not None:  # `a[i].x = v`, `r.x = v`: a record's field
                self.write_through(load.array, target)
                if is_array_field(load):
                    return self.store_array_field(load, value_node)
                return [ir.Store(target=load, value=self.expr(value_node))]
            raise Unsupported(target, "attribute assignment", "kernels cannot set attributes")
        raise Unsupported(target, "assignment target", "only names, tuples of names and array elements")

    def stored_value(self, load: ir.Load, value_node):
        """What `a[i] = value` stores: a number, or for a record element a whole record (`a[i] = a[j]`, `a[i] = r`)."""
        if is_record(load):
            value = self.value(value_node)
            if isinstance(value, ir.ArrayVar) and is_record(value):
                value = ir.Load(value, [])
            if not (is_record(value) and value.array.dtype == load.array.dtype):
                raise Unsupported(value_node, "assignment to a record", "a record element takes a record of its "
                                  "own type", "assign its fields one by one: a[i].x = ...")
            return value
        return self.expr(value_node)

    def write_through(self, arr, node):
        """Mark ARR (and the array it views) written, which a constant array may not be."""
        root = root_array(arr)
        if root.kind == "const":
            raise Unsupported(node, "write to a constant array", f"'{root.name}' lives in constant memory")
        mark_written(arr)

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
        made = value_node.value if isinstance(value_node, cst.Subscript) else None
        if isinstance(made, cst.Call) and resolve(self.info, made.func) in ARRAY_MAKERS:
            return self.view_of_new_array(name, resolve(self.info, made.func), value_node, target)
        if isinstance(self.scope.get(name), Poisoned):
            raise Reported(name)
        value = self.value(value_node)
        if isinstance(value, ir.Load) and is_record(value):  # `p = particles[i]`: a reference to that record
            value = self.record_reference(value, value_node)
        if isinstance(value, ir.DeviceCall) and value.optional:
            # `b = compute_bin(x)` of a function that may return None: the value and whether it is not None
            if name in self.scope:
                raise self.rebinding(target, [name], f"'{name}' reassigned",
                                     "it already names an array or a cuda object")
            flag = self.optionals.get(name) or self.fresh_name(f"{name}_is_some")
            self.optionals[name] = flag
            self.unwrapped.discard(name)  # a new result: None again, until a test or a guard says otherwise
            return [ir.TupleCall(targets=[ir.Name(name), ir.Name(flag)], call=value)]
        if isinstance(value, ir.DeviceCall) and isinstance(value.returned_array, TupleValue) and \
                any(a is None for a in value.returned_array.items):
            raise Unsupported(value_node, f"'{name}' holding arrays and numbers", "the device function returns "
                              "arrays it was given with numbers; numba2cuda binds such a result only unpacked",
                              f"unpack it: a, b, n = {self.info.code(value_node)}")
        if isinstance(value, ir.DeviceCall) and value.returned_array is not None:
            # `c = shade(color, ...)` of a device function that returns the array it was given: that array
            # (of several, `pair = freeprecess(afp, bfp, ...)`, those arrays as a tuple)
            if self.scope.get(name) is value.returned_array:
                return [ir.ExprStmt(value=value)]  # `M = vmuls(M, s)`: M holds that array already
            return [ir.ExprStmt(value=value)] + self.bind(name, value.returned_array, target)
        if isinstance(value, ir.DeviceCall):
            shape = self.call_shape(value)
            if shape is not None or returns_tuple(self.info.functions[value.func_name].node):
                return self.hold_results(name, value, shape, target)
        if isinstance(value, ArraySelect) or (isinstance(value, ir.ArrayVar) and (
                self.assign_counts.get(name, 0) > 1 or getattr(self.scope.get(name), "kind", "") == "alias")):
            return self.bind_alias(name, value, target)
        if isinstance(value, ir.Expr):
            held = self.scope.get(name)
            if isinstance(held, TupleValue) and name in self.block_local:
                del self.scope[name]  # the tuple's block has ended: Numba's SSA gives this binding its own type
                held = None
            if isinstance(held, TupleValue):
                raise self.rebinding(target, [name], f"'{name}' reassigned", f"it holds a tuple of "
                                     f"{len(held.items)} and now gets a number (Numba gives a variable one type)")
            if name in self.scope:
                raise self.rebinding(target, [name], f"'{name}' reassigned",
                                     "it already names an array or a cuda object")
            folded = self.local_constant(value)
            if const_int(folded) is not None:
                self.local_consts[name] = const_expr(const_int(folded), value_node)
            return [ir.Assign(target=ir.Name(name), value=value)]
        return self.bind(name, value, target)

    def bind(self, name, value, node) -> list:
        """Give a translation-time object (array, view, dim3, tuple) a name."""
        if isinstance(value, ir.ArrayVar) and value.kind == "alias" and self.scope.get(name) is not value:
            # a pointer the program points elsewhere later (`tmp = src; src = dst; dst = tmp`): the new name is a
            # pointer of its own, pointed where that one points now, as Numba's variable holds the array it got
            return self.bind_alias(name, value, node)
        if isinstance(value, TupleValue) and name in self.block_local and name not in self.tuple_vars and \
                isinstance(self.scope.get(name, value), TupleValue):
            # a binding whose value never leaves its block: the values it is made of, whatever the name held
            if all(is_stable(v) for v in value.items):
                self.scope[name] = value
                return []
            return self.bind_tuple(name, value, node)
        if isinstance(value, TupleValue) and (self.assign_counts.get(name, 0) > 1 or name in self.tuple_vars):
            return self.assign_tuple_variable(name, value, node)
        c_name = self.binding_name(name, node, "names of arrays, views and tuples must be assigned exactly once")
        self.scalar_names.discard(name)
        if isinstance(value, ir.ArrayVar) and value.kind == "view" and not value.name:
            value.name = c_name
            self.scope[name] = value
            self.arrays.append(value)
            return self.fixed_layout(value) + [ir.ArrayDecl(array=value)]
        if isinstance(value, TupleValue) and not all(is_stable(v) for v in value.items):
            return self.bind_tuple(name, value, node)
        self.scope[name] = value
        return []

    def binding_name(self, name, node, rule) -> str:
        """The C name of a new binding of NAME to an array, view or tuple. A name bound only by statements of one
        block outside loops and used only there (a parameter rebound to a local array, `a = ...` written twice) is
        taken over by each binding from there on, in the order written, as Numba's SSA gives each binding a
        variable of its own; otherwise it must be bound once, by RULE."""
        if name not in self.scope and self.assign_counts.get(name, 0) <= 1:
            return name
        if self.blocks and self.straight.get(name) is self.blocks[-1] and name not in self.tuple_vars and \
                not isinstance(self.scope.get(name), Poisoned):
            fresh = self.fresh_name(name)  # never the name itself: a number may have been bound to it before
            self.scalar_names.discard(fresh)
            return fresh
        raise self.rebinding(node, [name], f"'{name}' assigned more than once", rule)

    def view_of_new_array(self, name, canon, subscript, node) -> list:
        """`v = cuda.shared.array(0, dtype=np.int32)[1:]`: the array gets a name of its own, then the view is taken."""
        base = f"{name}_array"
        while base in self.scope or base in self.assign_counts:
            base += "_"
        try:
            out = self.declare_array(base, canon, subscript.value)
            arr = self.scope[base]
            if any(isinstance(el.slice, cst.Slice) for el in subscript.slice):
                view = self.slice_view(arr, subscript)
            else:
                view = self.index_array(arr, self.index_list(subscript), subscript)
        except Unsupported:
            self.scope[name] = Poisoned(name)
            raise
        if not isinstance(view, ir.ArrayVar):
            raise Unsupported(subscript, f"element of a new {canon}()", "it has no value yet", "index it later")
        return out + self.bind(name, view, node)

    def bind_alias(self, name, value, node) -> list:
        """An array name bound to several arrays (on two branches, or `x if c else y`): a pointer that Numba's
        one array type allows, pointed at the array each binding chooses."""
        sources = [value.then, value.orelse] if isinstance(value, ArraySelect) else [value]
        alias = self.scope.get(name)
        if alias is None:
            first = sources[0]
            alias = ir.ArrayVar(name, first.dtype, [], "alias", fortran=first.fortran)
            alias.shape = [ir.ShapeOf(alias, d) for d in range(first.ndim)]
            alias.sources = []
            self.scalar_names.discard(name)
            self.scope[name] = alias
            self.arrays.append(alias)
            self.prologue.append(ir.ArrayDecl(array=alias))
        elif not (isinstance(alias, ir.ArrayVar) and alias.kind == "alias"):
            raise self.rebinding(node, [name], f"'{name}' reassigned", "it already names an array or a cuda object")
        for src in sources:
            if src.pitch is not None and any(p is not None for p in src.pitch[1:]):
                raise self.rebinding(node, [name], f"'{name}' bound to a window", "a name bound to several arrays "
                                     "is a pointer with extents, and a window's rows lie further apart than its "
                                     "extents say", "index the window where it is made, or use a separate name")
            if src.step is not None and alias.step is None:
                # a column (`for col in b.T`, `c = a[:, j]` on one branch): its elements lie a step apart, kept
                # beside the pointer and the extents (1 where a binding is contiguous)
                alias.step = ir.PitchOf(alias, alias.ndim)
            if (src.dtype, src.ndim, src.fortran) != (alias.dtype, alias.ndim, alias.fortran):
                raise self.rebinding(node, [name], f"'{name}' bound to arrays of different types",
                                     f"{alias.dtype} {alias.ndim}-D{' column-major' * alias.fortran} here and "
                                     f"{src.dtype} {src.ndim}-D{' column-major' * src.fortran} elsewhere; "
                                     "Numba gives a name one type", "use a separate name for each kind of array")
            alias.sources.append(src)
        if alias.written:
            mark_written(alias)
        if isinstance(value, ArraySelect):
            if not is_pure(value.cond):
                raise Unsupported(node, "conditional array with a call in the condition",
                                  "the condition would be evaluated twice", "assign the condition to a variable first")
            return [ir.ArrayBind(alias=alias, source=value.then, cond=value.cond, orelse=value.orelse)]
        return [ir.ArrayBind(alias=alias, source=value)]

    def declare_array(self, name, canon, call: cst.Call) -> list:
        args = [a.value for a in call.args if a.keyword is None]
        kwargs = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        if canon == "cuda.const.array_like":
            if len(args) == 1 and isinstance(args[0], cst.Name) and isinstance(self.scope.get(args[0].value),
                                                                                 ir.ArrayVar):
                # of an array the kernel holds (lbm-gpu passes its weights): Numba's lowering returns the array
                return self.bind(name, self.scope[args[0].value], call)
            if len(args) == 1 and isinstance(args[0], cst.Name) and args[0].value in self.info.nonconstant:
                raise self.unknown_value(args[0].value, args[0])
            if len(args) != 1 or not isinstance(args[0], cst.Name) or not isinstance(
                    self.info.constants.get(args[0].value), ConstArray):
                raise Unsupported(call, "cuda.const.array_like()", "needs a module-level constant array",
                                  "DATA = np.array([...], dtype=np.float32) at module level")
            const = self.info.constants[args[0].value]
            if const.nbytes > CONSTANT_MEMORY_BYTES:
                raise Unsupported(args[0], f"cuda.const.array_like({args[0].value})", f"the array is {const.nbytes} "
                                  f"bytes; constant memory holds {CONSTANT_MEMORY_BYTES // 1024} KiB",
                                  "pass it to the kernel as an argument")
            # the C array keeps the module constant's name; the local name is only an alias of it
            arr = ir.ArrayVar(args[0].value, const.dtype, [const_expr(s) for s in const.shape], "const", c_dims=True)
            arr.const_values = const.values
            arr.const_name = args[0].value
        else:
            shape_node = args[0] if args else kwargs.get("shape")
            dtype_node = args[1] if len(args) > 1 else kwargs.get("dtype")
            if shape_node is None or dtype_node is None:
                raise Unsupported(call, f"{canon}()", "needs a shape and a dtype", f"{canon}(shape, dtype=float32)")
            dtype = self.dtype_of(dtype_node)
            if dtype is None and isinstance(dtype_node, cst.Name) and dtype_node.value in self.info.nonconstant:
                raise self.unknown_value(dtype_node.value, dtype_node)  # dt = from_dtype(arr.dtype) where it runs
            if dtype is None and isinstance(dtype_node, cst.SimpleString):
                raise Unsupported(dtype_node, f"array dtype {dtype_node.value}", "is no NumPy dtype of numbers, which "
                                  "numba-cuda reads a dtype string as (np.dtype(...); its typing fails: 'Invalid "
                                  "NumPy dtype specified')", "use a name such as \"float32\" or \"int32\", or "
                                  "np.float32")
            if dtype is None:
                raise Unsupported(dtype_node, "array dtype", "must be a NumPy or Numba scalar type",
                                  "use np.float32, float32, np.int32, ...")
            shape = self.value(shape_node)
            dims = shape.items if isinstance(shape, TupleValue) else [shape]
            dims = [self.local_constant(d) for d in dims]
            # a per-call value of the host function that makes the kernel is a template parameter: a constant of
            # each instantiation, as Numba bakes it into each call's kernel (frontend/percall.py)
            values = [const_int(d) if isinstance(d, ir.Expr) else None for d in dims]
            values = [1 if v is None and getattr(d, "per_call", False) else v for v, d in zip(values, dims)]
            if any(v is None for v in values):
                raise Unsupported(shape_node, f"{canon}() shape",
                                  "must be integer constants (literals, module-level constants, or arithmetic on them)",
                                  "use cuda.shared.array(0, dtype) for a size chosen at launch")
            if canon == "cuda.shared.array" and len(dims) == 1 and values[0] == 0:
                arr = ir.ArrayVar(name, dtype, [None], "dynamic")
            else:
                if any(v <= 0 for v in values):
                    rebound = [n.value for n in find_nodes(shape_node, lambda n: isinstance(n, cst.Name))
                               if n.value in self.info.value_notes and n.value in self.info.constants]
                    if rebound:  # `NBANDS = 0`, set by setup() through `global NBANDS` before the first launch
                        note = self.info.value_notes[rebound[0]]
                        raise Unsupported(shape_node, f"{canon}() shape", f"dimensions must be positive, and "
                                          f"'{rebound[0]}' is {self.info.constants[rebound[0]]!r} here: "
                                          f"{note.message.split(';')[0]}, and Numba sizes the array with the value "
                                          "it holds when the kernel compiles", "size it with a constant of its own "
                                          "(the largest the program uses), or give the module its real value")
                    raise Unsupported(shape_node, f"{canon}() shape", "dimensions must be positive")
                kind = "shared" if canon == "cuda.shared.array" else "local"
                arr = ir.ArrayVar(name, dtype, dims, kind, c_dims=True)
        swapped = arr.kind in ("shared", "local", "dynamic") and name not in self.scope and \
            self.assign_counts.get(name, 0) > 1 and self.straight.get(name) is None
        if swapped:
            # `a, b = b, a` of two shared buffers in a loop (a cellular automaton's ping-pong): the name is a
            # pointer the program points at one array or the other; the array gets a name of its own
            arr.name = self.fresh_name(f"{name}_array", 1)
            self.scalar_names.discard(arr.name)
        elif arr.kind != "const":
            arr.name = self.binding_name(name, call, "array names must be assigned exactly once")
        self.scalar_names.discard(name)
        self.arrays.append(arr)
        if swapped:
            return [ir.ArrayDecl(array=arr)] + self.bind_alias(name, arr, call)
        self.scope[name] = arr
        return [ir.ArrayDecl(array=arr)]

    def dtype_of(self, node):
        """The scalar type a dtype argument names: np.float32, float32, arr.dtype, a local bound to one, or a string
        NumPy reads as a dtype (`dtype="int32"`, "byte", "<f8": numba-cuda's parse_dtype takes np.dtype(...))."""
        if isinstance(node, cst.SimpleString) and isinstance(node.evaluated_value, str):
            try:
                dtype = np.dtype(node.evaluated_value)
            except TypeError:
                return None
            return T.scalar_by_name(dtype.name) if dtype.kind in "biufc" and dtype.isnative else None
        dtype = scalar_type_of_name(resolve(self.info, node))
        if dtype is not None:
            return dtype
        records = module_records(self.info)
        if isinstance(node, cst.Name) and node.value in records and node.value not in self.scope:
            return named_record(records[node.value], self.info)  # `cuda.shared.array(n, dtype=particle_t)`
        head = node
        while isinstance(head, cst.Attribute):
            head = head.value
        if isinstance(head, cst.Name) and (head.value in self.scope or head.value in self.info.aliases):
            value = self.value(node)
            return value.scalar if isinstance(value, TypeValue) else None
        return None

    def local_constant(self, e):
        """A local name bound once to an integer constant (`TPB = 16` in the kernel) stands for the constant,
        as Numba's constant inference sees it, where a shape must be known at compile time."""
        if isinstance(e, ir.Name) and self.assign_counts.get(e.name) == 1 and e.name in self.local_consts:
            self.shape_consts.add(e.name)
            return self.local_consts[e.name]
        if isinstance(e, ir.BinOp):
            left, right = self.local_constant(e.left), self.local_constant(e.right)
            if left is not e.left or right is not e.right:
                out = ir.BinOp(e.op, left, right)
                out.node = e.node
                return out
        return e

    def aug_assign(self, small: cst.AugAssign) -> list:
        op = AUG_OPS[type(small.operator)]
        if isinstance(small.target, cst.Name):
            cur = self.value(small.target)
            if not isinstance(cur, ir.Name):
                raise Unsupported(small.target, "augmented assignment", "only scalar variables and array elements")
            return [ir.Assign(target=ir.Name(small.target.value), value=ir.BinOp(op, cur, self.expr(small.value)))]
        if isinstance(small.target, cst.Attribute):  # `a[i].x += v`: a record's field
            load = self.value(small.target)
            if not (isinstance(load, ir.Load) and load.field is not None):
                raise Unsupported(small.target, "augmented assignment to an attribute", "kernels cannot set "
                                  "attributes", "only names, array elements and record fields")
            return self._update(load, op, small)
        if isinstance(small.target, cst.Subscript):
            base = small.target.value
            if isinstance(base, cst.Name) and isinstance(self.value(base), TupleValue):
                raise Unsupported(small.target, "augmented assignment to a tuple item", f"'{base.value}' is a tuple, "
                                  "and a tuple's items cannot be assigned (Numba refuses it too)",
                                  "make a new tuple, or use a cuda.local.array")
            load = self.value(small.target)
            if not isinstance(load, ir.Load):
                raise Unsupported(small.target, "augmented assignment to a slice", "assign element by element")
            return self._update(load, op, small)
        raise Unsupported(small.target, "augmented assignment target", "only names and array elements")

    def _update(self, load: ir.Load, op: str, small: cst.AugAssign) -> list:
        """`a[i] op= v`, `a[i].x op= v`: the element read and written at one address, its index evaluated once."""
        if not all(is_pure(i) for i in load.indices + (load.sub or [])):
            raise Unsupported(small.target, "augmented assignment with a call in the index",
                              "the index would be evaluated twice", "assign the index to a variable first")
        self.write_through(load.array, small.target)
        again = ir.Load(load.array, list(load.indices), list(load.wrap), load.field, load.sub and list(load.sub))
        return [ir.Store(target=load, value=ir.BinOp(op, again, self.expr(small.value)))]


    def fixed_layout(self, view: ir.ArrayVar) -> list:
        """A named view's extents (and pitch and step) are what they were where it was made: `t = a[lo:]` then
        `lo = 5` leaves len(t) as it was, and `a[b[1]:]` read once. Each one that might read otherwise later (a
        variable bound more than once, an array's element, a call) is kept in a local made with the view."""
        out = []

        def fixed(e, what):
            if not isinstance(e, ir.Expr) or self.reads_the_same(e):
                return e
            temp = self.fresh_name(f"{view.name}_{what}", 1)
            out.append(ir.Assign(target=ir.Name(temp), value=e))
            return ir.Name(temp)

        view.shape = [fixed(d, f"len{k}" if view.ndim > 1 else "len") for k, d in enumerate(view.shape)]
        if view.pitch is not None:
            view.pitch = [fixed(p, f"pitch{k}") for k, p in enumerate(view.pitch)]
        view.step = fixed(view.step, "step")
        return out

    def reads_the_same(self, e) -> bool:
        """Whether E gives the same value wherever the function reads it after this point: stable values, names
        bound at most once, and pure functions of those."""
        if is_stable(e):
            return True
        if isinstance(e, ir.Name):  # a parameter bound again, or a local bound twice, may differ later
            return self.assign_counts.get(e.name, 0) <= (0 if e.name in self.fn.params else 1)
        if isinstance(e, ir.BinOp):
            return self.reads_the_same(e.left) and self.reads_the_same(e.right)
        if isinstance(e, (ir.Unary, ir.Cast)):
            return self.reads_the_same(e.operand if isinstance(e, ir.Unary) else e.value)
        if isinstance(e, ir.Call) and e.intrinsic in PURE_LAYOUT_CALLS:
            return all(self.reads_the_same(a) for a in e.args)
        return False


# the functions a view's layout is computed with, which read nothing but their arguments
PURE_LAYOUT_CALLS = (intrinsics.SLICE_BOUND, intrinsics.WRAP_INDEX, SLICE_LEN, SLICE_START, SLICE_COUNT)


def is_stable(v) -> bool:
    """A value that reads the same wherever it is used: constants, thread geometry, shapes (m.shape, cuda.grid)."""
    if isinstance(v, TupleValue):
        return all(is_stable(x) for x in v.items)
    if isinstance(v, (Dim3, ir.ArrayVar, TypeValue)):
        return True
    if isinstance(v, (ir.Const, ir.Builtin, ir.ShapeOf)):
        return True
    if isinstance(v, ir.BinOp):
        return is_stable(v.left) and is_stable(v.right)
    if isinstance(v, (ir.Unary, ir.Cast)):
        return is_stable(v.operand if isinstance(v, ir.Unary) else v.value)
    return False
