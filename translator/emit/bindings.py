"""Program -> torch binding .cpp: one function per kernel that checks its arguments and calls the kernel's launcher.

A binding never throws for a bad argument or a failed launch: it returns None when the kernel launched, the index
of the first argument it refused, or (code, name, text) of a CUDA error, and the Python launcher (runtime/launch.py)
raises the exception with the message. Arguments are checked here because it costs nanoseconds per launch where the
same checks in Python cost microseconds.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..version import __version__
from ..ir.cnames import NameTable
from ..errors import UserError
from ..lower.names import entry_name, name_program
from ..ir import typesys as T
from ..analysis.specialize import value_rules
from .cexpr import c_type
from .render import environment, is_cooperative, python_signature, rule_refusal

AT_TYPES = {
    "bool": "at::kBool", "int8": "at::kChar", "int16": "at::kShort", "int32": "at::kInt", "int64": "at::kLong",
    "uint8": "at::kByte", "uint16": "at::kUInt16", "uint32": "at::kUInt32", "uint64": "at::kUInt64",
    "float16": "at::kHalf", "float32": "at::kFloat", "float64": "at::kDouble", "complex64": "at::kComplexFloat",
    "complex128": "at::kComplexDouble",
}

# The <cstdint> limits of the integer types narrower than the binding's int64_t / uint64_t.
INT_LIMITS = {"int8": "INT8", "int16": "INT16", "int32": "INT32", "uint8": "UINT8", "uint16": "UINT16",
              "uint32": "UINT32"}


def _binding_scalar(t: T.Scalar) -> str:
    if t.kind == "b":
        return "bool"
    if t.is_float:
        return "double"
    return "uint64_t" if t.kind == "u" else "int64_t"


def _refusal(p, name: str, rule) -> str:
    """The C condition under which a scalar argument (called NAME in C) is refused ("" when every value the binding
    takes is valid)."""
    t = p.type
    conds = []
    if t.name in INT_LIMITS:
        limit = INT_LIMITS[t.name]
        conds.append(f"{name} > {limit}_MAX" if t.kind == "u" else
                     f"{name} < {limit}_MIN || {name} > {limit}_MAX")
    if rule and rule_refusal(name, t.kind, rule):
        conds.append(rule_refusal(name, t.kind, rule))
    return " || ".join(conds)


@lru_cache(maxsize=1)
def template_names() -> frozenset:
    """Every identifier bindings.cpp.j2 spells (its helpers, locals, torch's namespaces and macros): a binding's
    parameter or function of the same name would hide or clash with it."""
    text = environment().loader.get_source(environment(), "bindings.cpp.j2")[0]
    text = re.sub(r"\{\{.*?\}\}|\{%.*?%\}", " ", text)
    return frozenset(re.findall(r"(?<![.>\w])[A-Za-z_]\w*", text))  # not members (grid.x, p->y): no clash


def kernel_context(fn, functions: NameTable | None = None) -> dict:
    """The template's values for one kernel: Python names where Python sees them (keyword arguments, the
    module's attribute), C names claimed clear of the template's own in code. FUNCTIONS is the file's scope,
    where each binding function is claimed."""
    functions = functions or NameTable(template_names())
    scope = NameTable(template_names())
    c = {p.name: scope.claim(p.name) for p in fn.params}
    launcher_types, params, array_checks, call_args, device_checks, scalar_checks, py_args = [], [], [], [], [], [], []
    arrays = [p for p in fn.params if p.array is not None]
    rules = value_rules(fn)
    for i, p in enumerate(fn.params):
        if p.array is not None:
            ct = c_type(p.type.dtype)
            launcher_types += [f"{ct} *"] + ["int64_t"] * p.type.ndim
            params.append(f"const at::Tensor &{c[p.name]}")
            if p.type.dtype.kind == "r":  # records arrive as their uint64 words (RNG states) or bytes, one more dimension
                unit, n = ("at::kByte", p.type.dtype.size) if isinstance(p.type.dtype, T.Record) else \
                    ("at::kUInt64", p.type.dtype.bits // 64)
                array_checks.append((f"!n2c_records_ok({c[p.name]}, {unit}, {p.type.ndim}, {n})", i))
            else:
                order = ", true" if p.type.layout == "F" else ""  # column-major: the first index steps by one
                array_checks.append((f"!n2c_array_ok({c[p.name]}, {AT_TYPES[p.type.dtype.name]}, {p.type.ndim}"
                                     f"{order})", i))
            device_checks.append((f"!{c[p.name]}.is_cuda()" if p is arrays[0] else
                                  f"{c[p.name]}.device() != {c[arrays[0].name]}.device()", i))
            call_args += [f"static_cast<{ct} *>({c[p.name]}.data_ptr())"] + \
                [f"{c[p.name]}.size({d})" for d in range(p.type.ndim)]
            py_args.append(f'py::arg("{p.name}")')
        else:
            launcher_types.append(c_type(p.type))
            params.append(f"{_binding_scalar(p.type)} {c[p.name]}")
            call_args.append(f"static_cast<{c_type(p.type)}>({c[p.name]})")
            refusal = _refusal(p, c[p.name], rules.get(p.name, ("", ""))[0])
            if refusal:
                scalar_checks.append((refusal, i))
            # noconvert: pybind11 would truncate a NumPy float to an integer; launch.py converts what it refuses
            py_args.append(f'py::arg("{p.name}")' + ("" if p.type.is_float else ".noconvert()"))
    # what a value is before where it is (a CPU tensor's kernel still says a bad tw); launch.py checks in this order
    checks = array_checks + scalar_checks + device_checks
    return dict(name=functions.claim(fn.c_name), py_name=entry_name(fn), launcher=f"{fn.c_name}_launch",
                max_blocks=f"{fn.c_name}_max_cooperative_blocks", cooperative=is_cooperative(fn),
                launcher_types=", ".join(launcher_types), binding_params=", ".join(params),
                checks=checks, call_args=", ".join(call_args), python_signature=python_signature(fn),
                first_array=c[arrays[0].name] if arrays else "", py_args=", ".join(py_args))


def refuse_unlaunchable(program) -> None:
    """A UserError for a kernel Python cannot launch through a built module (nor verify, nor the CPU runtime):
    one made per call (frontend/percall.py), whose launcher is a C++ template that one call's values
    instantiate; one that reads a device array of the module, or takes a tuple of arrays, which C takes as
    arrays of their own that a C++ caller passes."""
    for fn in program.kernels:
        tuples = [p for p in fn.python_params if isinstance(p.type, T.Tuple) and p.array is None
                  and any(q.array is not None for q in p.params)]
        if fn.per_call:
            raise UserError([program.info.reporter.make(
                fn.node.name, f"kernel '{entry_name(fn)}'", "is made by each call of the function around it, with "
                f"{', '.join(py for py, _, _ in fn.per_call)} of that call baked in, so there is no one kernel to "
                "build, verify or launch from Python", "call numba2cuda.load(kernel) on the kernel a call made (it "
                "translates it with that call's values), or name the file's other kernels with --kernel NAME")])
        if fn.captured:
            raise UserError([program.info.reporter.make(
                fn.node.name, f"kernel '{entry_name(fn)}'", f"reads {', '.join(fn.captured)}, a device array of the "
                "module that Numba captures by pointer: the translation takes it as a parameter after the kernel's "
                "own, for a C++ caller to pass; built modules, verify and the CPU runtime pass only the kernel's "
                "arguments", "pass the array to the kernel as an argument, or launch the translation's launcher "
                "from C++ with it")])
        if tuples:
            p = tuples[0]
            raise UserError([program.info.reporter.make(
                fn.node.name, f"kernel '{entry_name(fn)}'", f"takes '{p.name}', a tuple of arrays, which the "
                f"translation takes as parameters of their own ({', '.join(q.name for q in p.params if q.array)}) "
                "for a C++ caller to pass; built modules, verify and the CPU runtime pass arrays and tuples of "
                "numbers", f"pass the arrays of '{p.name}' as arguments of their own, or launch the translation's "
                "launcher from C++")])


def render_bindings(program, source_name: str) -> str:
    refuse_unlaunchable(program)
    name_program(program)  # the kernels' C names, as render_program gives them
    functions = NameTable(template_names())
    kernels = [kernel_context(fn, functions) for fn in program.kernels]
    records = sorted({c_type(p.type.dtype).split("::")[-1] for fn in program.kernels for p in fn.params
                      if p.array is not None and c_type(p.type.dtype).startswith("n2c::")})
    user_records = sorted({c_type(p.type.dtype) for fn in program.kernels for p in fn.params
                           if p.array is not None and isinstance(p.type.dtype, T.Record)})
    fp16 = any(T.FLOAT16 in (p.type, getattr(p.type, "dtype", None)) for fn in program.kernels for p in fn.params)
    return environment().get_template("bindings.cpp.j2").render(records=records, user_records=user_records, fp16=fp16,
        version=__version__, source_name=source_name, kernels=kernels)
