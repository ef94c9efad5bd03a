"""Calls of device functions -> DeviceCall (mixed into the expression lowerer): a @cuda.jit(device=True) or
@numba.jit function, or a kernel, which numba-cuda compiles as a device function where device code calls it; a
tuple argument travels as its items."""

from __future__ import annotations

from collections import ChainMap
from dataclasses import replace

from ..errors import Unsupported
from ..ir import nodes as ir
from .expr import Dim3, TupleValue, TypeValue, const_expr


class DeviceCallLowerer:
    """Needs, from the class it is mixed into: info, value(), expr()."""

    def device_call(self, node, name, args, kwargs):
        target = self.info.functions[name]
        if not target.is_device:
            target = self.device_twin(target, node)
        if kwargs:
            raise Unsupported(node, f"keyword arguments to '{name}'", "pass them positionally")
        if len(args) != len(target.params):
            raise Unsupported(node, f"call to '{name}'", f"takes {len(target.params)} argument(s), got {len(args)}")
        lowered, groups = [], []
        for a in args:
            v = self.value(a)
            items = self.tuple_items(v, a) if isinstance(v, TupleValue) else None
            groups.append(len(items) if items is not None else None)
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
        return ir.DeviceCall(name, lowered, key=target.key,
                             groups=groups if any(g is not None for g in groups) else None)

    def device_twin(self, kernel, node):
        """A @cuda.jit kernel called from device code: numba-cuda compiles it as a device function there (its
        dispatcher's call template), so the call reaches a device-function copy of it (one per module)."""
        if len(kernel.signatures) > 1:
            raise Unsupported(node, f"call to kernel '{kernel.name}'", "it has several signatures, and device code "
                              "calls one function", "keep one signature, or call a @cuda.jit(device=True) function")
        key = f"{kernel.key}.device"
        twin = self.info.functions.get(key)
        if twin is None:
            twin = replace(kernel, is_device=True, key=key, listed=False, notices=[], also_known_as=set())
            functions = self.info.functions
            # the program instantiates by key from the module's table (a nested scope's view chains to it)
            for table in functions.maps if isinstance(functions, ChainMap) else [functions]:
                table[key] = twin
        return twin

    @staticmethod
    def tuple_items(tup: TupleValue, node) -> list:
        """The items of a tuple passed whole to a device function, which takes them as parameters of their own:
        numbers only (a tuple of arrays or of tuples has no such flat form here)."""
        items = []
        for item in tup.items:
            if isinstance(item, (int, float)):  # bool too
                item = const_expr(item, node)
            if not isinstance(item, ir.Expr) or isinstance(item, ir.ArrayVar):
                raise Unsupported(node, "tuple argument", "a tuple passed to a device function may hold only numbers",
                                  "pass its arrays (or inner tuples) as arguments of their own")
            items.append(item)
        return items
