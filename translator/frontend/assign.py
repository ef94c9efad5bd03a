"""Assignments in a function body (names, tuples, array elements, array declarations) -> KernelIR statements.

A mixin of stmt.FunctionLowerer: the statement walker dispatches here for `=` and `op=`.
"""

from __future__ import annotations

import libcst as cst

from ..ir import nodes as ir
from .constants import ConstArray
from ..errors import Poisoned, Reported, Unsupported
from ..ir.facts import const_int, is_pure, mentions, root_array
from .expr import AUG_OPS, Dim3, TupleValue, const_expr
from .names import resolve, scalar_type_of_name
from .scan import returns_tuple

# calls whose result is a new array: `name = cuda.shared.array(...)` declares rather than assigns
ARRAY_MAKERS = ("cuda.shared.array", "cuda.local.array", "cuda.const.array_like")


class AssignLowerer:
    """Needs, from the class it is mixed into: info, scope, scalar_names, assign_counts, arrays, tmp_count,
    value(), expr(), poison()."""

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
        root = root_array(arr)
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
        name = f"tmp.{self.tmp_count}"  # no Python name can be it; lower/names.py spells it tmpN_ in C
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
