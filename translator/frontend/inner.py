"""Functions defined inside a kernel -> what each reads of the kernel (passed to it at each call).

Numba inlines a function a kernel defines (`def neg(v): ...`, `f = lambda v: ...`) where it is called, so it reads
the kernel's variables as they are then; numba2cuda makes each a device function of its own (Discoverer) and
passes those variables as trailing arguments."""

from __future__ import annotations

import libcst as cst

from .info import FunctionInfo
from .scan import NameReads, assignment_counts
from .values import DeviceArray


def captured_names(fi: FunctionInfo, inner: list, view) -> dict:
    """{key of a function defined in FI: the names of FI it reads, in order}: FI's parameters and the variables it binds
    that are not constants in VIEW (a local constant is read as its value), also those the functions it calls of
    INNER read, since each passes them on."""
    own = (set(fi.params) | set(assignment_counts(fi.node))) - set(view.constants)
    siblings = {f.node.name.value: f for f in inner}
    reads, calls = {}, {}
    for f in inner:
        local = set(f.params) | set(assignment_counts(f.node))
        names = _reads(f.node.body)
        reads[f.key] = {n for n in names if n in own and n not in local and n not in siblings}
        calls[f.key] = {siblings[n].key for n in names if n in siblings and n not in local}
    changed = True
    while changed:  # what a callee reads, its caller reads too (to pass it on)
        changed = False
        for f in inner:
            local = set(f.params) | set(assignment_counts(f.node))
            more = {n for g in calls[f.key] for n in reads[g] if n not in local} - reads[f.key]
            if more:
                reads[f.key] |= more
                changed = True
    return {f.key: tuple(sorted(reads[f.key])) for f in inner if reads[f.key]}


def device_array_reads(functions: dict, module) -> tuple:
    """({key of a device function: the device arrays of its scope it reads, and those the device functions it calls
    read}, {key of a kernel: {name: DeviceArray} its calls pass on}): numba-cuda's test_device_array_capture reads
    `global_array = cuda.to_device(...)` in a device function the kernel calls. Numba captures the pointer; the
    translation passes each as a trailing argument, from the kernel, which takes it from its launcher, down every
    call that leads to the read."""
    if not any(isinstance(v, DeviceArray) for f in functions.values() for v in (f.scope or module).constants.values()):
        return {}, {}  # the common case: no device array anywhere, nothing to pass
    reads, calls, values, local = {}, {}, {}, {}
    for f in functions.values():
        scope = f.scope or module
        local[f.key] = set(f.params) | set(assignment_counts(f.node))
        names = {n for n in _reads(f.node.body) if n not in local[f.key]}
        calls[f.key] = {scope.functions[n].key for n in names if n in scope.functions}
        if f.is_device:
            reads[f.key] = {n for n in names if isinstance(scope.constants.get(n), DeviceArray)}
            values.update((n, scope.constants[n]) for n in reads[f.key])
    changed = True
    while changed:  # what a callee reads, its caller passes on
        changed = False
        for f in functions.values():
            if f.is_device:
                more = {n for g in calls[f.key] for n in reads.get(g, ()) if n not in local[f.key]} - reads[f.key]
                reads[f.key] |= more
                changed = changed or bool(more)
    kernels = {f.key: {n: values[n] for g in calls[f.key] for n in reads.get(g, ())}
               for f in functions.values() if not f.is_device}
    return {key: tuple(sorted(names)) for key, names in reads.items() if names}, \
        {key: passed for key, passed in kernels.items() if passed}


def named_lambda(node) -> bool:
    """`f = lambda v: ...`: a function bound to a name."""
    return isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
        and isinstance(node.value, cst.Lambda)


def lambda_as_def(lam: cst.Lambda, name: cst.Name, reporter) -> cst.FunctionDef:
    """`lambda v: expr` read as `def NAME(v): return expr` (Numba makes the same function of it), located where the
    lambda is; NAME keeps its own place where it has one (`f = lambda ...`'s f)."""
    fn = cst.FunctionDef(name=name, params=lam.params,
                         body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Return(lam.body)])]))
    statement = fn.body.body[0]
    reporter.relocate([(lam, fn), (lam, fn.name), (lam, fn.body), (lam, statement), (lam, statement.body[0])])
    return fn


def _reads(node) -> list:
    found = []

    class Reads(NameReads):
        def visit_Name(self, n) -> None:
            found.append(n.value)

    node.visit(Reads())
    return found
