"""Program -> .cu text: function signatures, constants and launchers around the printed bodies (Jinja, StrictUndefined)."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path

import jinja2

from ..version import __version__
from ..ir import nodes as ir
from ..ir import typesys as T
from ..ir.records import c_struct
from ..ir.typesys import Record
from .cexpr import c_literal, c_type, pitch_name, shape_name
from .codegen import CPrinter
from ..ir.cnames import NameTable
from ..lower.names import name_function, name_program, renamed
from ..lower.declarations import defines
from ..analysis.calls import reachable_functions
from ..analysis.dataflow import walk_body
from ..analysis.limits import DEFAULT_LIMIT, static_shared_bytes, static_shared_terms
from ..analysis.specialize import instantiations, value_rules
from ..lower.program import Program
from ..frontend.expr import const_expr
from ..stack import deep_stack


# a macro with a value or parameters (`#define SCALE 2`, `#define sq(x) ...`), not an empty include guard
_VALUE_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?:\(|[ \t]+\S)", re.MULTILINE)


def _templates_dir() -> Path:
    here = Path(__file__).resolve().parent
    repo_templates = here.parents[1] / "templates"  # a source checkout: <repo>/templates
    if (repo_templates / "module.cu.j2").exists():
        return repo_templates
    return Path(str(resources.files("translator") / "templates"))


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(_templates_dir())),
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                              keep_trailing_newline=True, autoescape=False)


@lru_cache(maxsize=1)
def helper_sections() -> dict[str, str]:
    text = (_templates_dir() / "n2c_helpers.cuh").read_text()
    sections, name, lines = {}, None, []
    for line in text.splitlines():
        m = re.match(r"// @helper (\w+)", line)
        if m:
            if name:
                sections[name] = "\n".join(lines).strip()
            name, lines = m.group(1), []
        elif name:
            lines.append(line)
    if name:
        sections[name] = "\n".join(lines).strip()
    return sections


# ------------------------------------------------------------------ signatures

def names_of(fn: ir.Function) -> NameTable:
    """The function's C scope (lower/names.py), claimed now for one that no Program named (an LLM shell)."""
    if not hasattr(fn, "names"):
        name_function(fn, {})
    return fn.names


def _array_params(fn: ir.Function, arr: ir.ArrayVar, dims, const: bool) -> list[str]:
    t = c_type(arr.dtype)
    if arr.pointer:
        return [f"{'const ' if const else ''}{t} *{arr.name}"]
    steps = range(1, arr.ndim + (arr.step is not None))  # a strided parameter's step comes last
    pitch = [f"int64_t {pitch_name(names_of(fn), arr, d)}" for d in steps] if arr.pitch else []
    return [f"{'const ' if const else ''}{t} *{arr.name}"] + \
        [f"int64_t {shape_name(names_of(fn), arr, d)}" for d in dims] + pitch


def _template_of(fn: ir.Function, name: str):
    return next((t for (p, t, _) in getattr(fn, "template_params", []) if p == name), None)


def _scalar_param_name(p: ir.Param, fn: ir.Function) -> str:
    var = getattr(p, "variable", None)
    if _template_of(fn, p.name):
        return _arg_name(fn, p)  # the kernel reads the template value when it has one
    if var is not None and var.type != p.type:
        return _arg_name(fn, p)  # the Python code rebinds it with another type: copied into a local
    return var.c_name if var is not None else getattr(p, "c_name", p.name)


def _arg_name(fn: ir.Function, p: ir.Param) -> str:
    var = getattr(p, "variable", None)
    base = var.c_name if var is not None else getattr(p, "c_name", p.name)
    return names_of(fn).claim_as(("arg", p.name), f"{base}_arg")


def function_params(fn: ir.Function, kernel: bool) -> list[str]:
    out = []
    for p in fn.params:
        if p.array is not None:
            dims = sorted(p.array.shape_used) if kernel else range(p.array.ndim)
            out += _array_params(fn, p.array, dims, const=not p.array.written)
        else:
            out.append(f"{c_type(p.type)} {_scalar_param_name(p, fn)}")
    return out


def _param_prologue(fn: ir.Function) -> list[str]:
    out = []
    for p in fn.params:
        var = getattr(p, "variable", None)
        tname = _template_of(fn, p.name)
        if p.array is None and var is not None and tname:
            const = "" if defines(fn.body, var) else "const "
            out.append(f"{const}{c_type(var.type)} {var.c_name} = {tname} > 0 ? {tname} : {_arg_name(fn, p)};"
                       f"  // {tname} = 0: the generic kernel, any {p.name}")
        elif p.array is None and var is not None and var.type != p.type:
            out.append(f"{c_type(var.type)} {var.c_name} = {_arg_name(fn, p)};")
    return out


def _return_type(fn: ir.Function) -> str:
    rt = fn.return_type
    if isinstance(rt, T.Void):
        return "void"
    if isinstance(rt, T.Tuple):
        return fn.result_name
    return c_type(rt)


def _kernel_attributes(fn: ir.Function) -> str:
    """Numba's launch_bounds= and max_registers= options, which CUDA C states on the kernel."""
    bounds = fn.options.get("launch_bounds")
    if bounds:
        return f"__launch_bounds__({', '.join(map(str, bounds))}) "
    registers = fn.options.get("max_registers")
    return f"__maxnreg__({registers}) " if registers else ""


def _inline(fn: ir.Function) -> str:
    """inline="always" or forceinline=True in Numba: the device function is always inlined."""
    return "__forceinline__ " if fn.options.get("forceinline") or fn.options.get("inline") in ("always", True) else ""


def _result_struct(fn: ir.Function) -> str:
    fields = "\n".join(f"    {c_type(t)} v{k};" for k, t in enumerate(fn.return_type.items))
    return f"struct {fn.result_name} {{\n{fields}\n}};\n\n"


def python_signature(fn: ir.Function) -> str:
    return ", ".join(f"{p.name}: {p.type}" for p in fn.python_params)


# ------------------------------------------------------------------ module

def rule_refusal(name: str, kind: str, condition: str) -> str:
    """The C condition under which an integer parameter breaks its launch rule (analysis.specialize.value_rules);
    "" where its type already guarantees the rule (an unsigned one is never negative)."""
    if condition == "> 0":
        return f"{name} == 0" if kind == "u" else f"{name} < 1"
    if condition == ">= 0":
        return "" if kind == "u" else f"{name} < 0"
    return f"{name} == 0"


@lru_cache(maxsize=1)
def launcher_names() -> frozenset:
    """Every identifier templates/module.cu.j2 spells (the launcher's own parameters and locals: grid, stream,
    args, static_shared, ...): a kernel parameter of one of these names gets another in the launcher."""
    text = environment().loader.get_source(environment(), "module.cu.j2")[0]
    text = re.sub(r"\{\{.*?\}\}|\{%.*?%\}|//[^\n]*", " ", text)
    return frozenset(re.findall(r"(?<![.>\w])[A-Za-z_]\w*", text))  # not members (grid.x, p->y): no clash


def translated_how(info) -> str:
    """How the rules knew the kernels' values: from the source alone, or from the import mode's run."""
    if getattr(info.module_info, "imported", None) is None:
        return "without running the module"
    return "from the imported module's values"  # and its tests' or main()'s, up to the kernel's launch


class Renderer:
    def __init__(self, program: Program, source_name: str):
        self.program = program
        self.source_name = source_name
        reporter = program.info.reporter
        name_program(program)
        main = program.info.path

        def where(node) -> str | None:
            loc = reporter.location(node)
            if not loc.line:
                return None
            return f"{source_name if loc.path == main else Path(loc.path).name}:{loc.line}"
        self.printer = CPrinter(where, program.constant_names)

    def function_text(self, fn: ir.Function, kernel: bool) -> str:
        if getattr(fn, "external_code", None) is not None:  # the LLM backend's code, kept only once verified
            return fn.external_code.strip("\n")
        names_of(fn)
        body = self.printer.function_body(fn, _param_prologue(fn))
        params = ", ".join(function_params(fn, kernel))
        templates = getattr(fn, "template_params", []) if kernel else []
        template = f"template <{', '.join(f'int {t}' for _, t, _ in templates)}>\n" if templates else ""
        if fn.per_call:  # values Numba bakes in per call of the host function that makes the kernel
            template = f"template <{', '.join(f'{c_type(ty)} {c}' for _, c, ty in fn.per_call)}>\n"
        head = f"{template}__global__ void {_kernel_attributes(fn)}{fn.c_name}({params})" if kernel else \
            f"{template}__device__ {_inline(fn)}{_return_type(fn)} {fn.c_name}({params})"
        where = self.printer.where(fn.node)
        struct = _result_struct(fn) if isinstance(fn.return_type, T.Tuple) else ""
        notes = ", ".join(filter(None, [renamed(fn)] + [renamed(p.array if p.array is not None else
                                                                 getattr(p, "variable", None) or p)
                                                        for p in fn.params]))
        comment = (f"// {where}" + (f" (renamed: {notes})" if notes else "") + "\n") if where else ""
        return struct + comment + head + "\n{\n" + "\n".join(body) + "\n}"

    def kernel_context(self, fn: ir.Function, code: str) -> dict:
        # the launcher's own scope: its fixed parameters, the kernels it names, then the kernel's parameters
        scope = NameTable(launcher_names() | {fn.c_name})
        per_call = [(scope.claim(c), ty) for _, c, ty in fn.per_call]  # the launcher's template parameters
        pname = {p.name: scope.claim(p.name) for p in fn.params}
        launcher, pointers = [], []
        for p in fn.params:
            c = pname[p.name]
            if p.array is not None and p.array.pointer:  # a CPointer: the address alone
                launcher.append(f"{c_type(p.array.dtype)} *{c}")
                pointers.append(f"&{c}")
            elif p.array is not None:
                # every extent is in the launcher's ABI; the kernel receives the ones it reads
                extents = [scope.claim(f"{c}_shape{d}") for d in range(p.array.ndim)]
                launcher.append(f"{c_type(p.array.dtype)} *{c}")
                launcher += [f"int64_t {extents[d]}" if d in p.array.shape_used
                             else f"int64_t /* {extents[d]} */" for d in range(p.array.ndim)]
                pointers += [f"&{c}"] + [f"&{extents[d]}" for d in sorted(p.array.shape_used)]
            else:
                launcher.append(f"{c_type(p.type)} {c}")
                pointers.append(f"&{c}")
        notes = []
        rules = value_rules(fn)
        for name, (condition, why) in rules.items():
            notes.append(f"the launcher rejects {name} unless {name} {condition}: {why}")
        if fn.options.get("fastmath") and all(k.options.get("fastmath") for k in self.program.kernels):
            notes.append("fastmath=True in Numba: build with --use_fast_math for the same approximations")
        elif fn.options.get("fastmath"):
            notes.append("fastmath=True in Numba, but not every kernel here has it and --use_fast_math is one "
                         "flag per file: built exact; translate this kernel alone (--kernel) for Numba's "
                         "approximations")
        if fn.options.get("debug") and _may_divide_by_zero(fn):
            notes.append("debug=True in Numba raises ZeroDivisionError on a division by zero (Python's error model); "
                         "this translation follows Numba's default, NumPy's (x // 0 == 0 for integers, inf or nan "
                         "for floats)")
        kinds = {p.name: p.type.kind for p in fn.params if p.array is None}
        refusals = [(n, cond, rule_refusal(pname[n], kinds[n], cond)) for n, (cond, _) in rules.items()]
        checks = [f"if ({refusal}) // {fn.c_name} needs {n} {cond}\n        return cudaErrorInvalidValue;"
                  for n, cond, refusal in refusals if refusal]
        if hasattr(fn, "external_code"):  # a shell: its body (a model's, a hand-written one) may hold any __shared__
            static_shared = (DEFAULT_LIMIT, "not known (the body comes from elsewhere): opt in for any dynamic bytes")
        else:
            static_shared = (static_shared_bytes(fn), "bytes of the kernel's own __shared__ arrays")
            constant, terms = static_shared_terms(fn)
            if terms:  # shaped by template parameters: the launcher's own names for them
                launcher_name = {c: name for (_, c, _), (name, _) in zip(fn.per_call, per_call)}
                text = " + ".join(" * ".join([*(launcher_name[n] for n in names), str(k)]) for names, k in terms)
                static_shared = (text + (f" + {constant}" if constant else ""), "bytes of the kernel's own "
                                 "__shared__ arrays, some shaped by its template parameters")
        templates = getattr(fn, "template_params", [])
        # a kernel called `grid` is hidden by the launcher's own parameter of that name: name it from the top
        kernel = f"::{fn.c_name}" if fn.c_name in launcher_names() else fn.c_name
        dispatch = []
        for combo in instantiations(fn) if templates else []:
            cond = " && ".join(f"{pname[p]} == {v}" for (p, _, _), v in zip(templates, combo))
            dispatch.append((cond, f"{kernel}<{', '.join(map(str, combo))}>"))
        generic = f"{kernel}<{', '.join('0' for _ in templates)}>" if templates else kernel
        if per_call:
            generic = f"{kernel}<{', '.join(c for c, _ in per_call)}>"
            notes.append("made per call of the host function that makes it, with " + ", ".join(
                py for py, _, _ in fn.per_call) + " baked in, as Numba compiles it: template parameters, and "
                "its launcher a C++ template")
        if templates:
            notes.append("specialised: " + "; ".join(f"{p} in {{{', '.join(map(str, vs))}}} -> template <int {t}>"
                                                     for p, t, vs in templates)
                         + "; any other value runs the generic kernel")
        if fn.captured:
            notes.append(f"{', '.join(fn.captured)}: device array(s) of the module, which Numba captures by pointer: "
                         "the launcher takes them after the kernel's own arguments")
        cooperative = is_cooperative(fn)
        if cooperative:
            notes.append("makes the grid group (cuda.cg.this_grid()): launched cooperatively, as Numba does (every "
                         "block resident at once; a larger grid is an error naming the limit)")
        return dict(name=fn.c_name, python_signature=python_signature(fn), notes=notes, code=code,
                    cooperative=cooperative, launch="n2c_launch_cooperative" if cooperative else "n2c_launch",
                    launcher_params="    " + ",\n    ".join(launcher) if launcher else "",
                    arg_pointers=", ".join(pointers), checks=checks, dispatch=dispatch, generic=generic,
                    static_shared=static_shared,
                    template=f"template <{', '.join(f'{c_type(ty)} {c}' for c, ty in per_call)}>" if per_call else "",
                    switch_on=pname[templates[0][0]] if len(templates) == 1 else "",
                    cases=[(cond.split(" == ")[1], kernel) for cond, kernel in dispatch])

    def constants(self) -> list[str]:
        info = self.program.info
        out = []
        order = list(info.constants) + list(info.emitted_constants)
        for name in sorted(self.printer.constants_used, key=order.index):
            value = info.constant_value(name)
            const = const_expr(value)
            c = self.program.constant_names.get(name, name)
            note = f"  // renamed: {name} -> {c}" if c != name else ""
            out.append(f"static constexpr {c_type(const.const_type)} {c} = "
                       f"{c_literal(const.value, const.const_type)};{note}")
        seen = set()
        for fn in self.program.kernels + self.program.device_functions():
            for arr in getattr(fn, "arrays", []):
                if arr.kind == "const" and arr.name not in seen:
                    seen.add(arr.name)
                    # C has no arrays of size 0: an empty one keeps one element of storage, which no index reaches
                    dims = "".join(f"[{max(d.value, 1)}]" for d in arr.shape)
                    values = ", ".join(c_literal(v, arr.dtype) for v in arr.const_values)
                    empty = "  // empty: its length is 0" if any(d.value == 0 for d in arr.shape) else ""
                    out.append(f"__constant__ {c_type(arr.dtype)} {arr.name}{dims} = {{{values}}};{empty}")
        return out

    def linked(self) -> list[str]:
        """The CUDA sources cuda.declare_device links (each once), then the wrappers of Numba-ABI functions."""
        foreign = {}
        for fn in self.program.kernels + self.program.device_functions():
            foreign.update(getattr(fn, "foreign", {}))
        out, seen = [], set()
        for f in foreign.values():
            for path, text in f.sources:
                if path not in seen:
                    seen.add(path)
                    # Numba compiles each linked source on its own: a macro one defines must not reach the next
                    # source or the kernels (an include guard, defined empty, stays: a later source skips the header)
                    undefs = "".join(f"#undef {m}\n" for m in dict.fromkeys(_VALUE_MACRO.findall(text)))
                    out.append(f"// ---- {Path(path).name}, linked by cuda.declare_device (link=): the user's own "
                               f"CUDA source, as Numba links it\n{text.strip()}\n{undefs}"
                               f"// ---- end of {Path(path).name}")
        return out + [f.wrapper() for f in foreign.values() if f.wrapper()]

    def render(self) -> str:
        program = self.program
        device = [self.function_text(fn, kernel=False) for fn in program.device_functions()]
        kernel_codes = [self.function_text(fn, kernel=True) for fn in program.kernels]
        kernels = [self.kernel_context(fn, code) for fn, code in zip(program.kernels, kernel_codes)]
        for fn in program.kernels:  # module constants an LLM-written kernel uses are declared like the rules' own
            self.printer.constants_used.update(getattr(fn, "external_constants", ()))
        sections = helper_sections()
        order = list(sections)
        helpers = "\n\n".join(sections[h] for h in sorted(program.helpers | self.printer.helpers_printed,
                                                           key=order.index))
        linked = self.linked()
        records = {a.dtype.name: a.dtype for fn in program.kernels + program.device_functions()
                   for a in getattr(fn, "arrays", []) if isinstance(a.dtype, Record)}
        cooperative = any(k["cooperative"] for k in kernels)
        fortran = any(isinstance(p.type, T.Array) and p.type.layout == "F"
                      for fn in program.kernels for p in fn.python_params)
        text = environment().get_template("module.cu.j2").render(cooperative=cooperative, fortran=fortran,
                                                                 fp16="fp16" in program.helpers,
                                                                 bf16="bf16" in program.helpers,
                                                                 fp8="fp8" in program.helpers,
            version=__version__, source_name=self.source_name,
            source_hash=hashlib.sha256(program.info.source.encode()).hexdigest(),
            kernels=kernels, helpers=helpers, linked=linked, constants=self.constants(),
            records=[c_struct(r) for _, r in sorted(records.items())],
            functions=device + kernel_codes,
            provenance=getattr(program, "provenance", None) or [], how=translated_how(program.info))
        return re.sub(r"\n{3,}", "\n\n", text)


def is_cooperative(fn: ir.Function) -> bool:
    """Does the kernel, or a device function it calls, synchronise the whole grid?"""
    return any(getattr(f, "cooperative", False) for f in [fn] + reachable_functions([fn]))


def _may_divide_by_zero(fn) -> bool:
    """Whether FN, or a device function it calls, divides by something that may be 0: a float `/`, or a `//` or `%`
    (an integer one the bounds analysis did not prove safe: the n2c helpers)."""
    def divisor(e):
        while isinstance(e, ir.Cast):
            e = e.value
        return e

    def risky(node):
        if isinstance(node, ir.Call) and node.c_name.split("<")[0] in (
                "n2c::floordiv", "n2c::mod", "n2c::float_floordiv", "n2c::float_mod"):
            d = node.args[1]
        elif isinstance(node, ir.BinOp) and node.op in ("/", "%") and node.type.is_float:
            d = node.right
        else:
            return False
        return not (isinstance(divisor(d), ir.Const) and divisor(d).value != 0)

    return any(risky(node) for f in [fn, *reachable_functions([fn])] for node in walk_body(f.body))


@deep_stack  # the C printer recurses once per level of an expression
def render_program(program: Program, source_name: str) -> str:
    return Renderer(program, source_name).render()
