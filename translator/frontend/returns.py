"""A function's `return` -> C's return (mixed into the function lowerer): a device function's value or tuple, an
Optional result's (value, is not None), and nothing of the arrays it gives back that its caller holds already."""

from __future__ import annotations

import libcst as cst

from ..errors import Unsupported
from ..ir import nodes as ir
from .expr import TupleValue, const_expr
from .names import dotted
from .scan import returned_params, tuple_arity


class ReturnLowerer:
    """Needs, from the class it is mixed into: info, fn, scope, returned_params, optional_result, value(), expr(),
    fresh_name()."""

    def returned_positions(self, call: cst.Call):
        """The positions of the parameters the device function CALL calls returns (`return a`, `return a, b`), or
        None."""
        func = call.func
        name = func.value if isinstance(func, cst.Name) else dotted(func)
        target = self.info.functions.get(name) if name else None
        returned = returned_params(target.node, self.info.functions) if target is not None else None
        if returned is None or not all(p in target.params for p in returned):
            return None
        return tuple(target.params.index(p) for p in returned)

    def return_(self, small: cst.Return) -> list:
        none = small.value is None or (isinstance(small.value, cst.Name) and small.value.value == "None")
        if self.optional_result:
            # Numba's Optional result: C returns (value, is not None); a placeholder False unifies with any type
            value = const_expr(False, small) if none else self.expr(small.value)
            return [ir.Return(values=[value, const_expr(not none, small)])]
        if none:
            return [ir.Return()]  # `return None` is a bare return, in a kernel too
        if not self.fn.is_device:
            raise Unsupported(small, "return with a value in a kernel", "kernels cannot return values",
                              "write the result into an output array")
        given = [self.scope.get(p) for p in self.returned_params or ()]
        arrays = [isinstance(g, ir.ArrayVar) and g.kind == "param" for g in given]
        if any(arrays) and isinstance(small.value, cst.Call):
            # `return permute(state, buf, n)` of a function that gives back arrays it was given: its call, then
            # what it returns of numbers
            call = self.value(small.value)
            numbers = [self.fresh_name(f"{small.value.func.value}_{k}", 1) for k, a in enumerate(arrays) if not a]
            if not isinstance(call, ir.DeviceCall):
                raise Unsupported(small.value, "return of this call", "it gives back arrays it was given, and "
                                  "numba2cuda returns those only from a device function's own call")
            if not numbers:
                return [ir.ExprStmt(value=call), ir.Return()]
            if len(numbers) == 1:
                return [ir.Return(values=[call])]
            return [ir.TupleCall(targets=[ir.Name(n) for n in numbers], call=call),
                    ir.Return(values=[ir.Name(n) for n in numbers])]
        if given and all(arrays):
            # `return color`, `return afp, bfp` of arrays it was given (a ray tracer's shading, an MRI simulator's
            # outputs): the caller holds them already, so C returns nothing, and a caller that keeps the value
            # names those arrays (devcalls)
            return [ir.Return()]
        if any(arrays) and isinstance(small.value, cst.Tuple):
            # `return state, buf, buf_idx` (a hash's sponge state passed along): the numbers only, as C's result
            return [ir.Return(values=[self.expr(el.value) for el, a in zip(small.value.elements, arrays) if not a])]
        if isinstance(small.value, cst.Tuple):
            return [ir.Return(values=[self.expr(el.value) for el in small.value.elements])]
        callee = small.value.func.value if isinstance(small.value, cst.Call) and isinstance(
            small.value.func, cst.Name) and small.value.func.value in self.info.functions else None
        arity = tuple_arity(self.info.functions[callee].node, self.info.functions) if callee else None
        if arity is not None:
            # `return normalize(v)`: C returns each function's own result struct, so the items pass one by one
            call = self.value(small.value)
            if isinstance(call, ir.DeviceCall):
                items = [self.fresh_name(f"{callee}_{k}", 1) for k in range(arity)]
                return [ir.TupleCall(targets=[ir.Name(n) for n in items], call=call),
                        ir.Return(values=[ir.Name(n) for n in items])]
            return [ir.Return(values=[call if isinstance(call, ir.Expr) else self.expr(small.value)])]
        held = self.value(small.value) if isinstance(small.value, cst.Name) else None
        if isinstance(held, TupleValue) and all(isinstance(v, ir.Expr) for v in held.items):
            return [ir.Return(values=list(held.items))]  # `t = (x, y); return t`: the values it holds
        return [ir.Return(values=[self.expr(small.value)])]
