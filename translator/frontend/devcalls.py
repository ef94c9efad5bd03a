"""Calls of device functions -> DeviceCall (mixed into the expression lowerer): a @cuda.jit(device=True) or
@numba.jit function, or a kernel, which numba-cuda compiles as a device function where device code calls it; a
tuple argument travels as its items."""

from __future__ import annotations

from collections import ChainMap
from dataclasses import replace

import libcst as cst

from .recordfields import is_record
from ..errors import Unsupported
from ..ir import intrinsics
from ..ir import nodes as ir
from ..ir import typesys as T
from .expr import Dim3, TupleValue, TypeValue, const_expr
from .info import FunctionInfo
from .names import qualified_name, resolve, scalar_type_of_name
from .scan import find_nodes, returned_params, returned_view, returns_optional, returns_tuple
from .shapes import count_numbers, nest, result_shape

#: calls that size an array from their first argument (a compile-time constant in Numba)
ARRAY_MAKERS = ("cuda.shared.array", "cuda.local.array", "cuda.const.array_like")


class DeviceCallLowerer:
    """Needs, from the class it is mixed into: info, value(), expr()."""

    def device_call(self, node, name, args, kwargs):
        target = self.info.functions[name]
        if not target.is_device:
            target = self.device_twin(target, node)
        for kw in kwargs:
            if kw not in target.params[len(args):]:
                raise Unsupported(kwargs[kw], f"keyword argument '{kw}' of '{name}'",
                                  "it names no parameter after the positional arguments" if kw not in target.params
                                  else "its parameter is given positionally too")
        declared = target.params[:len(target.params) - len(target.captured)]
        if len(args) < len(declared) and all(p in kwargs or p in target.defaults for p in declared[len(args):]):
            # `f(x, k=3)`, `f(x)` of `def f(x, k=2)`: the rest by name or by default, as Numba binds them
            args = args + [kwargs.get(p, target.defaults.get(p)) for p in declared[len(args):]]
        if len(args) != len(declared):
            raise Unsupported(node, f"call to '{name}'", f"takes {len(declared)} argument(s), got {len(args)}")
        view = returned_view(target.node) if not target.captured else None
        if view is not None:
            inlined = self.inlined_view(declared, view, args)
            if inlined is not None and target.options.get("inline") not in ("always", True):
                raise Unsupported(node, f"call to {name}()", f"'{name}' returns a view of its argument, which "
                                  "numba-cuda compiles only where the function is inlined (its typing fails: 'Only "
                                  "accept returning of array passed into the function as argument')",
                                  "add inline=\"always\" to its @cuda.jit(device=True), or return the array itself")
            if inlined is not None:
                return inlined
        for c in target.device_arrays:  # passed on by name: a name of the caller's own would be passed instead
            if c not in self.fn.device_arrays and (c in self.fn.params or self.assign_counts.get(c, 0)):
                raise Unsupported(node, f"call to {name}()", f"'{name}' reads the module's device array '{c}', "
                                  f"which numba2cuda passes down from the kernel; here '{c}' is this function's own "
                                  "variable, which hides it", f"rename this function's '{c}'")
        args = args + [self.captured_name(node, c) for c in target.captured]
        bound = self.compile_time_args(target, args)
        if bound:
            args = [a for p, a in zip(target.params, args) if p not in bound]
            target = specialised(target, bound, self.info.module_info)
        lowered, groups = [], []
        returned, given = returned_params(target.node, self.info.functions) or (), {}
        for param, a in zip(target.params, args):
            v = self.value(a)
            if isinstance(v, ir.Load) and is_record(v):  # `energy(ps[i])`: Numba passes the record by reference
                v = self.record_reference(v, a)
            if isinstance(v, ir.DeviceCall):
                v = self.tuple_result(v, a)
            if param in returned and isinstance(v, ir.ArrayVar):
                given[param] = v
            items = self.tuple_items(v, a) if isinstance(v, TupleValue) else None
            groups.append(item_shape(v) if items is not None else None)
            if items is not None:
                lowered.extend(items)
            elif isinstance(v, ir.ArrayVar):
                ref = ir.ArrayRef(v)
                ref.node = a
                lowered.append(ref)
            elif isinstance(v, TypeValue):
                raise Unsupported(a, f"type argument '{self.info.code(a)}'", "numba2cuda does not specialise a "
                                  "device function on a type passed to it", "use the type inside the device function")
            elif isinstance(v, Dim3):
                raise Unsupported(a, f"argument '{self.info.code(a)}'", "a dim3 is passed by its components",
                                  "pass .x, .y and .z separately")
            else:
                lowered.append(v)
        # a function that returns arrays it was given (`return color`, `return afp, bfp`): those arrays
        returned_array = None
        tupled = len(returned) > 1 or returns_tuple(target.node)
        if returned and all(p in given for p in returned):
            returned_array = TupleValue([given[p] for p in returned]) if tupled else given[returned[0]]
        elif returned and any(p in given for p in returned) and tupled:
            returned_array = TupleValue([given.get(p) for p in returned])  # None: a number C returns
        return ir.DeviceCall(name, lowered, key=target.key,
                             groups=groups if any(g is not None for g in groups) else None,
                             returned_array=returned_array, optional=returns_optional(target.node))

    def inlined_view(self, params, view: cst.Subscript, args):
        """`return a[:, 0]` (numba-cuda's overload with inline="always"), `return m[i]`: a function whose body
        returns a view of a parameter gives that view of the argument, made where it is called, as Numba returns
        the view's descriptor; C cannot return one. None where the subscript gives a number (an ordinary call).
        An argument with an effect is computed once, before the statement, as the call would compute it."""
        bound = dict(zip(params, args))
        base = self.value(bound[view.value.value]) if view.value.value in bound else None
        if not isinstance(base, ir.ArrayVar) or (
                all(isinstance(el.slice, cst.Index) for el in view.slice) and len(view.slice) >= base.ndim):
            return None
        reads = {n.value for n in find_nodes(view, lambda n: isinstance(n, cst.Name))}
        values = {}
        for param, a in bound.items():
            value = base if param == view.value.value else \
                self.computed_once(self.value(a), a, "argument", f"{param}_arg")
            if param in reads:
                values[param] = value
        held = {p: self.scope[p] for p in values if p in self.scope}
        self.scope.update(values)
        try:
            result = self.value(view)
        finally:
            for p in values:
                del self.scope[p]
            self.scope.update(held)
        return result if isinstance(result, ir.ArrayVar) else None

    def captured_name(self, call, name: str) -> cst.Name:
        """NAME read where CALL is, located there: what a function defined in the kernel reads of it."""
        read = cst.Name(name)
        self.info.reporter.relocate([(call, read)])
        return read

    def compile_time_args(self, target, args) -> dict:
        """The arguments Numba compiles into the callee rather than passing (numba-cuda's atomics tests pass
        `uint32, 32, cuda.atomic.add, cast_fn`): types, functions (cuda's, math's, device functions), and numbers
        the callee sizes a shared or local array with. param -> ("alias", qualified) | ("function", FunctionInfo)
        | ("constant", value)."""
        shapes = shape_params(target, target.scope or self.info.module_info)
        bound = {}
        for param, a in zip(target.params, args):
            if isinstance(a, cst.Name) and a.value in self.info.functions and a.value not in self.scope:
                bound[param] = ("function", self.info.functions[a.value])
                continue
            canon = resolve(self.info, a)
            if canon is not None and callable_name(canon):
                bound[param] = ("alias", qualified_name(self.info, a))
                continue
            if param in shapes or canon is not None and scalar_type_of_name(canon) is not None \
                    or isinstance(a, cst.Name) and isinstance(self.scope.get(a.value), TypeValue) \
                    or isinstance(a, cst.Attribute) and a.attr.value in ("dtype", "type"):
                v = self.value(a)
                if isinstance(v, TypeValue):
                    bound[param] = ("alias", "numpy." + ("bool_" if v.scalar == T.BOOL else v.scalar.name))
                elif param in shapes and constant_of(v) is not None:
                    bound[param] = ("constant", constant_of(v))
        return bound

    def device_twin(self, kernel, node):
        """A @cuda.jit kernel called from device code: numba-cuda compiles it as a device function there (its
        dispatcher's call template), so the call reaches a device-function copy of it (one per module)."""
        if len(kernel.signatures) > 1:
            raise Unsupported(node, f"call to kernel '{kernel.name}'", "it has several signatures, and device code "
                              "calls one function", "keep one signature, or call a @cuda.jit(device=True) function")
        twin = self.info.functions.get(f"{kernel.key}.device")
        if twin is None:
            twin = kernel.device_copy()
            # the program instantiates by key from the module's table (a nested scope's view chains to it), which
            # under --import-module a sibling module's kernel (`kick_gpu = cuda.jit(kick)` of an imported function)
            # is not: the view's tables and the module's both get it
            for functions in (self.info.functions, self.info.module_info.functions):
                for table in functions.maps if isinstance(functions, ChainMap) else [functions]:
                    table.setdefault(twin.key, twin)
        return twin

    def call_shape(self, call: ir.DeviceCall):
        """The shape of the tuple CALL's device function returns (shapes.tuple_shape), or None."""
        return result_shape(self.info.functions[call.func_name], self.info.functions)

    def tuple_result(self, call: ir.DeviceCall, node, into: list | None = None):
        """CALL itself, or, where it returns a tuple, the tuple its results are kept in: the call is a statement
        of its own, appended to INTO (`rgb, p = trace(...)`, `return normalize(v)`), or, by default, run before
        the statement being lowered (an argument: `minus(p, scaled(0.5, p))`, a slicer's point arithmetic)."""
        shape = self.call_shape(call)
        if shape is None:
            return call
        if into is None and self.conditional:
            raise Unsupported(node, f"argument {self.info.code(node)}", "a call returning a tuple, passed on where "
                              "it may not run (a condition, a while loop's test)", "call it first: t = f(...)")
        items = [self.fresh_name(f"{call.func_name}_{k}", 1) for k in range(count_numbers(shape))]
        kept = ir.TupleCall(targets=[ir.Name(n) for n in items], call=call)
        if into is None:
            kept.node = node
        (self.hoisted if into is None else into).append(kept)
        return nest([ir.Name(n) for n in items], shape)

    @staticmethod
    def tuple_items(tup: TupleValue, node) -> list:
        """The items of a tuple passed whole to a device function, which takes them as parameters of their own:
        numbers and arrays, those of the tuples it holds in order (a neutron guide's planes, tuples of points)."""
        items = []
        for item in tup.items:
            if isinstance(item, (int, float)):  # bool too
                item = const_expr(item, node)
            if isinstance(item, TupleValue):
                items += DeviceCallLowerer.tuple_items(item, node)
                continue
            if isinstance(item, ir.ArrayVar):
                ref = ir.ArrayRef(item)
                ref.node = node
                item = ref
            elif not isinstance(item, ir.Expr):
                raise Unsupported(node, "tuple argument", "a tuple passed to a device function may hold numbers, "
                                  "arrays and tuples of them", "pass what it holds as arguments of their own")
            items.append(item)
        return items


def item_shape(tup: TupleValue) -> tuple:
    """How a tuple argument's flat items nest: None for a number or an array, a tuple for a tuple."""
    return tuple(item_shape(v) if isinstance(v, TupleValue) else None for v in tup.items)


def callable_name(canon: str) -> bool:
    """Whether CANON names a function a kernel calls (cuda.atomic.add, math.sqrt), passed here as a value."""
    return canon.startswith(("cuda.atomic.", "cuda.random.")) or intrinsics.lookup(canon) is not None


def constant_of(v):
    """The number or tuple of numbers V stands for, else None."""
    if isinstance(v, ir.Const):
        return v.value
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, TupleValue):
        items = [constant_of(i) for i in v.items]
        return tuple(items) if all(i is not None for i in items) else None
    return None


def shape_params(fi: FunctionInfo, view) -> set:
    """FI's parameters that appear in the shape of an array it makes: Numba needs their values to compile it."""
    params = set(fi.params)
    found = set()
    for call in find_nodes(fi.node.body, lambda n: isinstance(n, cst.Call)):
        canon = resolve(view, call.func)
        if canon in ARRAY_MAKERS and call.args:
            found |= {n.value for n in find_nodes(call.args[0].value, lambda n: isinstance(n, cst.Name))} & params
    return found


def specialised(fi: FunctionInfo, bound: dict, root) -> FunctionInfo:
    """FI compiled for the compile-time arguments BOUND: those parameters become names of its scope (an import
    alias, a device function, a constant), as Numba's typing of the call makes them; one copy per binding."""
    key = fi.key + "(" + ", ".join(f"{p}={_describe(b)}" for p, b in sorted(bound.items())) + ")"
    made = root.functions.get(key)
    if made is not None:
        return made
    scope = fi.scope or root
    view = scope.view(aliases=dict(scope.aliases), constants=dict(scope.constants),
                      nonconstant=dict(scope.nonconstant), functions=ChainMap({}, scope.functions))
    for param, (kind, value) in bound.items():
        view.nonconstant.pop(param, None)
        if kind == "alias":
            view.aliases[param] = value
        elif kind == "function":
            view.functions[param] = value
        else:
            view.constants[param] = value
    made = replace(fi, key=key, scope=view, params=[p for p in fi.params if p not in bound], signature=None,
                   signatures=[], listed=False, also_known_as=set())
    root.functions[key] = made
    return made


def _describe(binding) -> str:
    kind, value = binding
    return value.key if kind == "function" else repr(value)
