"""A function's `return` -> C's return (mixed into the function lowerer): a device function's value or tuple, an
Optional result's (value, is not None), and nothing of the arrays it gives back that its caller holds already."""

from __future__ import annotations

import libcst as cst

from ..errors import Unsupported
from ..ir import nodes as ir
from .expr import TupleValue, const_expr
from .names import dotted
from .scan import returned_params
from .shapes import flatten, shape_of, tuple_shape


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
            prelude: list = []
            items = [self.returned_value(el.value, prelude) for el in small.value.elements]
            return prelude + [self.return_tuple(TupleValue(items), small)]
        if isinstance(small.value, cst.Call):
            prelude = []
            value = self.returned_value(small.value, prelude)
            if isinstance(value, TupleValue):  # `return normalize(v)`: C returns each function's own struct
                return prelude + [self.return_tuple(value, small)]
            return [ir.Return(values=[value])]
        held = self.value(small.value) if isinstance(small.value, cst.Name) else None
        if isinstance(held, TupleValue):
            return [self.return_tuple(held, small)]  # `t = (x, y); return t`: the values it holds
        return [ir.Return(values=[self.expr(small.value)])]

    def returned_value(self, node, prelude: list):
        """A returned tuple's item (or the returned call): a number, or a tuple, a device function's tuple result
        unpacked into locals first (PRELUDE gets that call)."""
        value = self.value(node)
        if isinstance(value, ir.DeviceCall):
            value = self.tuple_result(value, node, prelude)
        if isinstance(value, (ir.Expr, TupleValue)):
            return value
        return self.expr(node)

    def return_tuple(self, value: TupleValue, node) -> ir.Return:
        """C returns a tuple's numbers one after another, a tuple of tuples too: the callers nest them again by
        the shape they read from the source (shapes.tuple_shape), which must be this one."""
        numbers = flatten(value)
        if numbers is None:
            raise Unsupported(node, "return of a tuple", "it holds something other than numbers and tuples of them",
                              "return numbers; write arrays into an output array")
        if numbers and len(numbers) < len(value.items) or any(isinstance(v, TupleValue) for v in value.items):
            if shape_of(value) != tuple_shape(self.fn.node, self.info.functions):
                raise Unsupported(node, "return of a tuple of tuples", "numba2cuda could not tell from the source "
                                  "that every return of this function gives a tuple of this shape",
                                  "write each return as a tuple of tuples, or of names bound only to tuples")
        return ir.Return(values=numbers)
