"""ModuleInfo + the rules' verdicts -> LLM jobs: which kernels the rules reject, a launchable shell for each, and the facts the prompt states.

A shell is an ir.Function with the kernel's parameters and no body: render.py and bindings.py
give it the same launcher, binding and checks as a rule-translated kernel, and the model's code is
spliced in where the rules' body would be (`external_code`). Parameter types come from the
frontend (--types, NUMBA2CUDA_TYPES, the decorator's signature, annotations); what the rules would
have learned from a full lowering is approximated conservatively: an array is `const` only when
the source visibly only reads it, and every array passes all its extents.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import libcst as cst

from . import ir
from . import typesys as T
from .codegen import c_literal, c_type
from .errors import Diagnostic, Unsupported, UserError
from .frontend import FunctionInfo, ModuleInfo, parse_source
from .lower_assign import ARRAY_MAKERS
from .lower import Options, Program, build_program, kernel_types_of, selected_kernels
from .names import resolve

READ_ONLY_ATTRIBUTES = ("shape", "size", "ndim")


@dataclass
class KernelJob:
    """One kernel for the model: its shell, the exact signature to implement, and what the prompt says."""
    name: str
    shell: ir.Function
    signature: str
    diagnostics: list[Diagnostic] = field(default_factory=list)  # why the rules rejected it ([] under --backend llm)
    facts: dict = field(default_factory=dict)  # rendered into prompts/translate.j2


# ------------------------------------------------------------------ the rules' verdicts

def rejected_kernels(info: ModuleInfo, options: Options) -> dict[str, list[Diagnostic]]:
    """{kernel: the rules' diagnostics} for each selected kernel the rules cannot translate on its own."""
    out = {}
    for fi in selected_kernels(info, options):
        trial = parse_source(info.source, info.path)  # a fresh reporter per kernel
        try:
            build_program(trial, replace(options, kernels=[fi.name]))
        except UserError as exc:
            if not exc.diagnostics:
                raise  # not about the source (a bad option): the rules' answer stands
            out[fi.name] = exc.diagnostics
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
        if isinstance(node, cst.Name) and node.value in self.ndims and not self._is_read(node):
            self.written.add(node.value)
        self.stack.append(node)
        return True

    def on_leave(self, original_node) -> None:
        self.stack.pop()

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
        else:
            params.append(ir.Param(name, ty))
    fn = ir.Function(fi.name, True, params, [], node=fi.node, options=dict(fi.options))
    fn.c_name = fi.name
    fn.arrays = [p.array for p in params if p.array is not None]
    fn.helpers = set()
    fn.template_params = []  # generic only: specialising the model's code is not verified per value
    fn.external_code = None  # the model's verified code, set by llm.py
    fn.external_constants = set()
    return fn


def signature_of(shell: ir.Function) -> str:
    from .render import function_params

    return f"__global__ void {shell.c_name}({', '.join(function_params(shell, kernel=True))})"


# ------------------------------------------------------------------ facts for the prompt

def make_job(info: ModuleInfo, shell: ir.Function, options: Options, diagnostics: list[Diagnostic],
             reserved: set[str]) -> KernelJob:
    """The job of kernel SHELL: RESERVED are the names the rest of the file defines."""
    fi = info.functions[shell.c_name]
    types = [p.type for p in shell.params]
    used = _names_in(info, fi)
    shell.external_constants = {n for n in used if _constant_decl(info, n)}
    job = KernelJob(fi.name, shell, signature_of(shell), diagnostics)
    name = Path(info.path).name
    job.facts = dict(
        kernel=fi.name, source_name=name, signature=job.signature,
        source=_numbered(info, fi.node),
        device_sources=[_numbered(info, info.functions[d].node) for d in _device_callees(info, fi)],
        params=[_param_fact(p) for p in shell.params],
        constants=[_constant_decl(info, n) for n in sorted(shell.external_constants, key=list(info.constants).index)],
        memory=_memory_lines(info, fi),
        unsupported=[_diagnostic_line(d, name) for d in diagnostics],
        partial=partial_translation(info, fi, types, options),
        reserved=sorted(reserved),
        options=sorted(k for k, v in fi.options.items() if v not in (False, None)),
    )
    return job


def reserved_names(program: Program) -> set[str]:
    """Names the rules' part of the file defines; the model's helpers must not take them."""
    names = {fn.c_name for fn in program.kernels} | {fn.c_name for fn in program.device_functions()}
    return names | {f"{fn.c_name}_launch" for fn in program.kernels} | {"n2c_launch"}


def _numbered(info: ModuleInfo, node) -> str:
    """The function's source (with its decorators) with the file's line numbers."""
    lines = info.code(node).strip("\n").splitlines()
    def_index = next((i for i, line in enumerate(lines) if line.lstrip().startswith("def ")), 0)
    start = info.reporter.location(node).line - def_index  # libcst places a function at its `def`
    width = len(str(start + len(lines)))
    return "\n".join(f"{start + k:>{width}} | {line}" for k, line in enumerate(lines))


def _param_fact(p: ir.Param) -> dict:
    if p.array is not None:
        const = "" if p.array.written else "const "
        c = [f"{const}{c_type(p.array.dtype)} *{p.name}"] + [f"int64_t {p.name}_shape{d}" for d in range(p.type.ndim)]
        role = "may be written" if p.array.written else "read only: const"
    else:
        c, role = [f"{c_type(p.type)} {p.name}"], "scalar"
    return dict(name=p.name, numba_type=str(p.type), c=", ".join(c), role=role)


def _names_in(info: ModuleInfo, fi: FunctionInfo) -> set[str]:
    names: set[str] = set()
    for node in [fi.node] + [info.functions[d].node for d in _device_callees(info, fi)]:
        class Names(cst.CSTVisitor):
            def visit_Name(self, n: cst.Name) -> None:
                names.add(n.value)
        node.body.visit(Names())
    return names


def _device_callees(info: ModuleInfo, fi: FunctionInfo) -> list[str]:
    """Device functions FI calls, directly or not, in the order they are found."""
    order, todo = [], [fi]
    while todo:
        current = todo.pop()
        called: list[str] = []

        class Calls(cst.CSTVisitor):
            def visit_Call(self, call: cst.Call) -> None:
                if isinstance(call.func, cst.Name):
                    called.append(call.func.value)
        current.node.body.visit(Calls())
        for name in called:
            target = info.functions.get(name)
            if target is not None and target.is_device and name not in order:
                order.append(name)
                todo.append(target)
    return order


def _constant_decl(info: ModuleInfo, name: str) -> str | None:
    """`static constexpr int64_t EMIN = -24;` for a scalar module constant, as render.py declares it."""
    if name not in info.constants:
        return None
    from .lower_expr import const_expr

    try:
        const = const_expr(info.constants[name])
    except Unsupported:
        return None  # tuples and arrays: the model writes their values itself
    return f"static constexpr {c_type(const.const_type)} {name} = {c_literal(const.value, const.const_type)};"


def _memory_lines(info: ModuleInfo, fi: FunctionInfo) -> list[str]:
    found = []

    class Makers(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            if resolve(info, call.func) in ARRAY_MAKERS:
                line = info.reporter.location(call).line
                found.append(f"line {line}: {info.code(call)}")
    fi.node.body.visit(Makers())
    return found


def _diagnostic_line(d: Diagnostic, source_name: str) -> str:
    text = f"{source_name}:{d.loc.line}:{d.loc.col + 1}: {d.construct}: {d.message}"
    if d.source_line:
        text += f"\n    {d.source_line.strip()}"
    return text


def partial_translation(info: ModuleInfo, fi: FunctionInfo, types: list, options: Options) -> str | None:
    """The rules' C for the statements they could translate (rejected ones are missing), body only; None if
    not even that can be had. Context for the model, never compiled as it stands."""
    from .legalize import Legalizer
    from .lower_stmt import FunctionLowerer
    from .render import Renderer
    from .typer import Typer

    trial = parse_source(info.source, info.path)
    try:
        tfi = trial.functions[fi.name]
        lowerer = FunctionLowerer(trial, tfi, types)
        fn = lowerer.lower()
        fn.arrays, fn.helpers, fn.c_name, fn.template_params = lowerer.arrays, set(lowerer.helpers), fi.name, []
        program = Program(trial, replace(options, kernels=[fi.name]))
        Typer(fn, program, trial.reporter).run()
        fn.body = _typed_statements(fn.body)
        Legalizer(fn, fn.helpers, options.assume_nonnegative).run()
        for dev in reversed(program.device_functions()):
            Legalizer(dev, dev.helpers, options.assume_nonnegative).run()
        text = Renderer(program, Path(info.path).name).function_text(fn, kernel=True)
    except Exception:  # noqa: BLE001 - best effort: a partial lowering may trip any later stage
        return None
    body = text[text.index("{") + 1:text.rindex("}")].strip("\n") if "{" in text else ""
    return body if body.strip() else None


def _typed_statements(body: list) -> list:
    """BODY without the statements the typer could not type (they use a name whose definition was rejected)."""
    from .dataflow import stmt_exprs, walk_expr

    out = []
    for s in body:
        names = [n for e in stmt_exprs(s) if e is not None for n in walk_expr(e) if isinstance(n, ir.Name)]
        if any(n.var is None for n in names) or (isinstance(s, ir.Assign) and s.target.var is None):
            continue
        for attr in ("body", "orelse"):
            if isinstance(getattr(s, attr, None), list):
                setattr(s, attr, _typed_statements(getattr(s, attr)))
        out.append(s)
    return out


def program_with_shells(info: ModuleInfo, options: Options) -> Program:
    """The rules' program, plus a shell for each selected kernel the rules reject (its code comes from a given
    .cu: the LLM's, or a hand-written one under `verify --cu`). The rules' own error when a shell is impossible."""
    try:
        return build_program(info, options)
    except UserError as rules_error:
        if not rules_error.diagnostics:
            raise
        fresh = parse_source(info.source, info.path)
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
    accepted = [fi.name for fi in selected if fi.name not in to_model]
    rules_info = parse_source(info.source, info.path)
    if accepted:
        program = build_program(rules_info, replace(options, kernels=accepted))
    else:
        program = Program(rules_info, options)
    shells = []
    for fi in selected:
        if fi.name in to_model:
            shells.append(make_shell(fi, kernel_types(info, fi, options)))
    program.kernels.extend(shells)
    return program, shells
