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


def inherit_per_call(kernel: ir.Function) -> None:
    """A device function made in the host function that makes the kernel may read that call's values too
    (frontend/percall.py): it is a template as well, and each function that calls it, the kernel last, takes
    those values as template parameters of its own to pass on."""
    for fn in [*reachable_functions([kernel]), kernel]:  # callees first
        have = {py for py, _, _ in fn.per_call}
        for call in device_calls(fn.body):
            for py, _, ty in call.target.per_call:
                if py not in have:
                    have.add(py)
                    fn.per_call.append((py, py, ty))  # spelt in C by lower/names.py
