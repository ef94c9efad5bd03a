"""typed KernelIR -> its call graph: the device-function instances a kernel reaches, callees first."""

from __future__ import annotations

from ..ir import nodes as ir
from .dataflow import walk_body


def reachable_functions(roots: list) -> list:
    """The device-function instances the ROOTS call, directly or not, each once, callees first."""
    seen, order = set(), []

    def visit(fn):
        for call in device_calls(fn.body):
            if id(call.target) not in seen:
                seen.add(id(call.target))
                visit(call.target)
                order.append(call.target)

    for fn in roots:
        visit(fn)
    return order


def device_calls(body):
    """The device-function calls a body makes, nested statements included."""
    return (node for node in walk_body(body) if isinstance(node, ir.DeviceCall))
