"""ModuleInfo + a kernel's shell (lower/shells.py) -> an LLM job: the exact signature to implement and the facts
the prompt states (parameters, memory, constants, device callees, the rules' partial translation)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import libcst as cst

from ..ir import nodes as ir
from ..emit.cexpr import c_literal, c_type
from ..errors import Diagnostic, Unsupported
from ..frontend.module import FunctionInfo, ModuleInfo, reparse
from ..frontend.assign import ARRAY_MAKERS
from ..lower.program import Options, Program
from ..frontend.names import resolve



@dataclass
class KernelJob:
    """One kernel for the model: its shell, the exact signature to implement, and what the prompt says."""
    name: str
    shell: ir.Function
    signature: str
    diagnostics: list[Diagnostic] = field(default_factory=list)  # why the rules rejected it ([] under --backend llm)
    facts: dict = field(default_factory=dict)  # rendered into prompts/translate.j2
    answer_sha256: str = ""  # of the verified answer (as cached), recorded in a package's build info


def signature_of(shell: ir.Function) -> str:
    from ..emit.render import function_params

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
        tuples=[info.code(info.constant_nodes[n]).strip() for n in info.constants
                if n in used and n not in shell.external_constants and n in info.constant_nodes],
        tolerance=tolerance(info),
        helpers=helper_lines(),
    )
    return job


def tolerance(info: ModuleInfo) -> str:
    """How the answer's outputs are compared with the original's, in words: example()'s literal rtol/atol if it
    gives them, else the per-dtype defaults verify uses."""
    from ..verify.compare import DEFAULT_TOLERANCES

    given = {}

    class Keywords(cst.CSTVisitor):
        def visit_Arg(self, arg: cst.Arg) -> None:
            if arg.keyword is not None and arg.keyword.value in ("rtol", "atol"):
                try:
                    given[arg.keyword.value] = float(ast.literal_eval(info.code(arg.value).strip()))
                except (ValueError, SyntaxError, TypeError):
                    given[arg.keyword.value] = None

    for stmt in info.module.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "example":
            stmt.visit(Keywords())
    if given.get("rtol") is not None and given.get("atol") is not None:
        if given["rtol"] == 0 and given["atol"] == 0:
            return "every output exactly (example() gives rtol=0, atol=0): bit for bit, integers and floats"
        return (f"integers exactly; floats within |got - expected| <= {given['atol']:g} + {given['rtol']:g} * "
                "|expected| (example()'s atol and rtol), NaN and Inf in the same places")
    defaults = ", ".join(f"{t}: rtol {r:g}, atol {a:g}" for t, (r, a) in DEFAULT_TOLERANCES.items())
    return (f"integers exactly; floats within |got - expected| <= atol + rtol * |expected| ({defaults}, unless "
            "example() gives rtol/atol), NaN and Inf in the same places")


def helper_lines() -> list[str]:
    """`n2c::floordiv(...)`: one line per helper of templates/n2c_helpers.cuh an answer may call, with its comment."""
    from ..emit.render import helper_sections
    from .check import helper_functions

    comments = {}
    for section, text in helper_sections().items():
        comments[section] = " ".join(line[2:].strip() for line in text.splitlines()
                                     if line.startswith("//")) or ""
    by_section: dict = {}
    sections = helper_sections()
    for name, section in helper_functions().items():
        params = re.search(rf"\b{name}\s*\(([^)]*)\)", sections[section])
        by_section.setdefault(section, []).append(f"n2c::{name}({' '.join(params.group(1).split()) if params else ''})")
    return [", ".join(names) + (f": {comments[s]}" if comments.get(s) else "") for s, names in by_section.items()]


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
    from ..frontend.expr import const_expr

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
    from ..lower.legalize import Legalizer
    from ..frontend.stmt import FunctionLowerer
    from ..emit.render import Renderer
    from ..analysis.typer import Typer

    trial = reparse(info)
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
    from ..analysis.dataflow import stmt_exprs, walk_expr

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
