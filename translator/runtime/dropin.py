"""numba module path -> built extension whose kernels launch exactly like Numba's: k[grid, block, stream, shared](*args)."""

from __future__ import annotations

from pathlib import Path

from ..ir import typesys as T
from ..analysis.limits import static_shared_bytes
from ..analysis.specialize import value_rules
from ..emit.bindings import render_bindings
from ..frontend.module import parse_file
from ..lower.program import Options, build_program
from ..lower.shells import program_with_shells
from ..emit.render import python_signature, render_program

class Module:
    """The translated kernels of one Numba module, as attributes."""

    def __init__(self, path, program, ext, cu_text, cpp_text, tuning=None):
        from .launch import Kernel  # imports torch: only when kernels are loaded

        self.path = path
        self.program = program
        self.cu = cu_text
        self.cpp = cpp_text
        self.extension = ext
        self.tuning = tuning or {}  # {kernel: {param: {size: value}}} from <stem>.n2c-tune.json
        self.kernels = {}
        for fn in program.kernels:  # by their Python names (the binding registers each under it)
            kernel = Kernel(getattr(ext, fn.name), *kernel_metadata(fn), tuning=self.tuning.get(fn.name))
            self.kernels[fn.name] = kernel
            setattr(self, fn.name, kernel)

    def __repr__(self):
        return f"<numba2cuda module {self.path}: {', '.join(self.kernels)}>"


def kernel_metadata(fn):
    """(name, parameters, doc, static shared bytes) of a kernel, as launch.Kernel takes them: per parameter
    (name, type as Numba's signature spells it, whether the kernel writes it, the rule its value must meet).
    The name is the Python one, which the binding registers (its C name may differ: lower/names.py)."""
    rules = value_rules(fn)
    params = []
    for p in fn.params:
        rule = ": ".join(rules[p.name]) if p.name in rules else ""
        params.append((p.name, str(p.type), bool(p.array is not None and p.array.written), rule))
    return fn.name, tuple(params), f"{fn.name}({python_signature(fn)})", static_shared_bytes(fn)


def extension_name(path) -> str:
    """The extension's (and the CPU runtime library's) name: the module's stem as a C identifier."""
    return "".join(c if c.isalnum() else "_" for c in Path(path).stem)


def fast_math(program) -> bool:
    """Whether a kernel has fastmath=True in Numba."""
    return any(k.options.get("fastmath") for k in program.kernels)


def nvcc_flags(program) -> list[str]:
    """Flags the kernels' Numba options ask for: fastmath=True -> --use_fast_math (the same approximations)."""
    return ["--use_fast_math"] if fast_math(program) else []


def program_for(info, options: Options | None = None, shells: bool = False):
    """The program of a parsed module; shells: kernels the rules reject keep their parameters (program_with_shells)."""
    if shells:
        return program_with_shells(info, options or Options())
    return build_program(info, options or Options())


def sources(path, options: Options | None = None, shells: bool = False):
    """(program, kernel .cu text, binding .cpp text) for a Numba module. shells: kernels the rules reject get
    their launcher and binding anyway, for a .cu given from elsewhere (the LLM backend's, a hand-written one)."""
    program = program_for(parse_file(path), options, shells)
    name = Path(path).name
    return program, render_program(program, name), render_bindings(program, name)


def load(path, *, specialize: dict | None = None, types: dict | str | None = None, kernels=None,
         assume_nonnegative: bool = True, extra_cuda_cflags=(), progress: bool = True,
         cu_text: str | None = None) -> Module:
    """Translate, build (cached by content) and load a Numba module's kernels as drop-in replacements.

    specialize: {"tw": (8, 16, 32)} per parameter, or {"*": ()} to build only generic kernels.
    The autotune table beside the module (<stem>.n2c-tune.json, from `numba2cuda bench --autotune --record`),
    if any, answers kernel.tuned(param, size, default); it never changes a value a launch passes.
    cu_text: a (hand-edited) translation to build instead of a fresh one; its launchers must keep the
    fresh translation's signatures, since the bindings come from the module.
    """
    from ..build import build_extension
    from .tuning import read_tuning, tuning_path

    if isinstance(types, str):
        types = T.parse_types_option(types)
    options = Options(kernels=list(kernels or []), types=dict(types or {}), specialize=dict(specialize or {}),
                      assume_nonnegative=assume_nonnegative)
    program, fresh_cu, cpp_text = sources(path, options, shells=cu_text is not None)
    cu_text = fresh_cu if cu_text is None else cu_text
    ext = build_extension(extension_name(path), cu_text, cpp_text,
                          extra_cuda_cflags=[*nvcc_flags(program), *extra_cuda_cflags], progress=progress)
    return Module(str(path), program, ext, cu_text, cpp_text, read_tuning(tuning_path(path)))
