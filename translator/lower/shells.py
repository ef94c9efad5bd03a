"""ModuleInfo + a .cu from elsewhere -> Program: the rules' kernels, plus a launchable shell for each kernel the
rules reject, whose body comes from the given .cu (the LLM backend's, or a hand-written one under `verify --cu`).

A shell is an ir.Function with the kernel's parameters and no body: the emitter gives it the same
launcher, binding and checks as a rule-translated kernel, and the external code is spliced in where
the rules' body would be (`external_code`). Parameter types come from the frontend (--types,
NUMBA2CUDA_TYPES, the decorator's signature, annotations); what the rules would have learned from a full
lowering is approximated conservatively: an array is `const` only when the source visibly only reads it,
and every array passes all its extents.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from ..errors import Diagnostic, Unsupported, UserError
from ..frontend.info import FunctionInfo, ModuleInfo
from ..frontend.module import reparse
from ..ir import nodes as ir
from ..ir import typesys as T
from .kernel_types import kernel_types_of
from .program import Options, Program, build_program
from .selection import selected_kernels

READ_ONLY_ATTRIBUTES = ("shape", "size", "ndim")


# ------------------------------------------------------------------ the rules' verdicts

def rejected_kernels(info: ModuleInfo, options: Options) -> dict[str, list[Diagnostic]]:
    """{kernel: the rules' diagnostics} for each selected kernel the rules cannot translate on its own."""
    out = {}
    for fi in selected_kernels(info, options):
        trial = reparse(info)  # a fresh reporter per kernel
        try:
            build_program(trial, replace(options, kernels=[fi.key]))
        except UserError as exc:
            if not exc.diagnostics:
                raise  # not about the source (a bad option): the rules' answer stands
            out[fi.key] = exc.diagnostics
    return out


def kernel_types(info: ModuleInfo, fi: FunctionInfo, options: Options) -> list:
    """The kernel's parameter types, as the rules would take them; UserError when they are unknown."""
    try:
        return kernel_types_of(info, fi, options)
    except Unsupported as exc:
        info.reporter.add_unsupported(exc)
        raise UserError(info.reporter.diagnostics) from None


def types_known(info: ModuleInfo, name: str, options: Options) -> bool:
    """Whether kernel_types would succeed, without adding to INFO's report."""
    try:
        kernel_types_of(info, info.functions[name], options)
        return True
    except Unsupported:
        return False


# ------------------------------------------------------------------ the shell

def written_arrays(fi: FunctionInfo, types: list) -> set[str]:
    """Array parameters the kernel may write: every use that is not visibly a read counts as a write."""
    ndims = {p: t.ndim for p, t in zip(fi.params, types) if isinstance(t, T.Array)}
    finder = _UseFinder(ndims)
    fi.node.body.visit(finder)
    return finder.written


class _UseFinder(cst.CSTVisitor):
    def __init__(self, ndims: dict):
        super().__init__()
        self.ndims = ndims
        self.written: set[str] = set()
        self.stack: list = []

    def on_visit(self, node) -> bool:
        if isinstance(node, cst.Name) and node.value in self.ndims and self._names_a_variable(node) \
                and not self._is_read(node):
            self.written.add(node.value)
        self.stack.append(node)
        return True

    def on_leave(self, original_node) -> None:
        self.stack.pop()

    def _names_a_variable(self, name: cst.Name) -> bool:
        """Not the `x` of `cuda.threadIdx.x` nor a keyword's name: those are spelled like a parameter but are not it."""
        parent = self.stack[-1] if self.stack else None
        if isinstance(parent, cst.Attribute) and parent.attr is name:
            return False
        return not (isinstance(parent, cst.Arg) and parent.keyword is name)

    def _is_read(self, name: cst.Name) -> bool:
        parent = self.stack[-1] if self.stack else None
        if isinstance(parent, cst.Attribute) and parent.value is name:
            return parent.attr.value in READ_ONLY_ATTRIBUTES
        if isinstance(parent, cst.Arg) and len(self.stack) >= 2:
            call = self.stack[-2]
            return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "len"
        if not (isinstance(parent, cst.Subscript) and parent.value is name):
            return False  # passed on, aliased or rebound: it may be written through
        if not self._full_element(parent, self.ndims[name.value]):
            return False  # a row or a slice: a view that may be written through
        return not self._in_target(parent)

    @staticmethod
    def _full_element(sub: cst.Subscript, ndim: int) -> bool:
        elements = list(sub.slice)
        if len(elements) == 1 and isinstance(elements[0].slice, cst.Index) and \
                isinstance(elements[0].slice.value, cst.Tuple):
            count = len(elements[0].slice.value.elements)
        else:
            count = len(elements)
        return count == ndim and all(isinstance(e.slice, cst.Index) for e in elements)

    def _in_target(self, sub) -> bool:
        chain = self.stack + [sub]
        for parent, child in zip(chain, chain[1:]):
            if isinstance(parent, cst.AssignTarget):
                return True
            if isinstance(parent, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)) and child is parent.target:
                return True
        return False


def make_shell(fi: FunctionInfo, types: list) -> ir.Function:
    """A kernel with parameters and no body, for render.py and bindings.py to wrap."""
    written = written_arrays(fi, types)
    params = []
    for name, ty in zip(fi.params, types):
        if isinstance(ty, T.Array):
            arr = ir.ArrayVar(name, ty.dtype, [None] * ty.ndim, "param", written=name in written,
                              shape_used=set(range(ty.ndim)))
            params.append(ir.Param(name, ty, arr))
        elif spread := ir.spread_param(name, ty, lambda c: c in fi.params):  # as the rules' kernels take them
            params += spread
        else:
            params.append(ir.Param(name, ty))
    fn = ir.Function(fi.name, True, params, [], node=fi.node, options=dict(fi.options))
    fn.c_name = fi.name
    fn.arrays = [p.array for p in params if p.array is not None]
    fn.helpers = set()
    fn.template_params = []  # generic only: specialising the model's code is not verified per value
    fn.external_code = None  # the model's verified code, set by llm/backend.py
    fn.external_constants = set()
    return fn


def program_with_shells(info: ModuleInfo, options: Options) -> Program:
    """The rules' program, plus a shell for each selected kernel the rules reject (its code comes from a given
    .cu: the LLM's, or a hand-written one under `verify --cu`). The rules' own error when a shell is impossible."""
    try:
        return build_program(info, options)
    except UserError as rules_error:
        if not rules_error.diagnostics:
            raise
        fresh = reparse(info)
        if fresh.reporter.diagnostics:
            raise rules_error from None  # a decorator or declaration problem: no kernel list to trust
        rejected = rejected_kernels(fresh, options)
        if not rejected:
            raise rules_error from None
        try:
            return assemble(fresh, options, rejected)[0]
        except UserError:
            raise rules_error from None


def assemble(info: ModuleInfo, options: Options, to_model: dict) -> tuple[Program, list]:
    """(program, shells): the rules' translation of the selected kernels not in TO_MODEL, then one shell per
    kernel in TO_MODEL ({name: diagnostics}), in source order."""
    selected = selected_kernels(info, options)
    accepted = [fi.key for fi in selected if fi.key not in to_model]
    rules_info = reparse(info)
    if accepted:
        program = build_program(rules_info, replace(options, kernels=accepted))
    else:
        program = Program(rules_info, options)
    shells = []
    for fi in selected:
        if fi.key in to_model:
            shells.append(make_shell(fi, kernel_types(info, fi, options)))
    program.kernels.extend(shells)
    return program, shells
