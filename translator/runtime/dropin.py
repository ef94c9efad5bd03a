"""numba module path -> built extension whose kernels launch exactly like Numba's: k[grid, block, stream, shared](*args)."""

from __future__ import annotations

from pathlib import Path

from ..errors import UserError
from ..ir import typesys as T
from ..analysis.limits import static_shared_bytes
from ..analysis.specialize import value_rules
from ..emit.bindings import refuse_unlaunchable, render_bindings
from ..frontend.module import parse_file
from ..lower.program import Options, build_program
from ..lower.names import entry_name
from ..lower.shells import program_with_shells
from ..emit.render import python_signature, render_program

class Module:
    """The translated kernels of one Numba module, as attributes."""

    def __init__(self, path, program, ext, cu_text, cpp_text, tuning=None):
        from .launch import Dispatcher, Kernel  # imports torch: only when kernels are loaded

        self.path = path
        self.program = program
        self.cu = cu_text
        self.cpp = cpp_text
        self.extension = ext
        self.tuning = tuning or {}  # {kernel: {param: {size: value}}} from <stem>.n2c-tune.json
        self.kernels = {}
        by_name: dict = {}
        for fn in program.kernels:  # by the names the binding registers them under (lower/names.py: entry_name)
            name = entry_name(fn)
            kernel = Kernel(getattr(ext, name), *kernel_metadata(fn), tuning=self.tuning.get(name))
            self.kernels[name] = kernel
            setattr(self, name, kernel)
            by_name.setdefault(getattr(fn, "python_name", name), []).append((fn, kernel))
        for name, group in by_name.items():
            if len(group) > 1:  # several signatures: the Python name dispatches on the arguments, as Numba's does
                signatures = [[(p.type.dtype.name, p.type.ndim) if p.array is not None else None
                               for p in fn.python_params] for fn, _ in group]
                dispatcher = Dispatcher(name, [k for _, k in group], signatures)
                self.kernels[name] = dispatcher
                setattr(self, name, dispatcher)
        for name, info in getattr(program, "ufuncs", {}).items():  # @vectorize/@guvectorize: called like Numba's
            from .ufunc import UFunc

            ufunc = UFunc(info, dict(self.kernels))
            setattr(self, name, ufunc)
            self.kernels[name] = ufunc

    def __repr__(self):
        return f"<numba2cuda module {self.path}: {', '.join(self.kernels)}>"


def kernel_metadata(fn):
    """(name, parameters, doc, static shared bytes) of a kernel, as launch.Kernel takes them: per parameter
    (name, type as Numba's signature spells it, whether the kernel writes it, the rule its value must meet).
    The name is the Python one, which the binding registers (its C name may differ: lower/names.py)."""
    rules = value_rules(fn)
    params = []
    for p in fn.python_params:  # a tuple parameter is one, as Python passes it (the binding takes its items)
        if len(p.params) == 1:
            rule = ": ".join(rules[p.name]) if p.name in rules else ""
        else:  # its items' rules, "[1] >= 0: why | ..." (an item the kernel specialises or assumes >= 0)
            rule = " | ".join(f"[{k}] " + ": ".join(rules[q.name]) for k, q in enumerate(p.params) if q.name in rules)
        params.append((p.name, str(p.type), bool(p.array is not None and p.array.written), rule))
    name = entry_name(fn)
    return name, tuple(params), f"{name}({python_signature(fn)})", static_shared_bytes(fn)


def extension_name(path) -> str:
    """The extension's (and the CPU runtime library's) name: the module's stem as a C identifier (ASCII letters,
    digits and underscores; a leading underscore before a digit, as in `0x778_filter.py`)."""
    name = "".join(c if c.isascii() and c.isalnum() else "_" for c in Path(path).stem)
    return f"_{name}" if name[:1].isdigit() else name


def fast_math(program) -> bool:
    """Whether the file builds with fast math: every kernel has fastmath=True in Numba. --use_fast_math is one flag
    for the whole file, and Numba's fastmath is per kernel: where only some ask for it, none gets it (the others'
    division and square roots stay exact, as in Numba), and the .cu says so above the kernel."""
    return bool(program.kernels) and all(k.options.get("fastmath") for k in program.kernels)


def nvcc_flags(program) -> list[str]:
    """Flags the kernels' Numba options ask for: fastmath=True -> --use_fast_math (the same approximations);
    lineinfo=True -> -lineinfo (profilers map the machine code to the .cu lines, which name the Python lines)."""
    flags = ["--use_fast_math"] if fast_math(program) else []
    if any(k.options.get("lineinfo") for k in program.kernels):
        flags.append("-lineinfo")
    return flags


def program_for(info, options: Options | None = None, shells: bool = False):
    """The program of a parsed module; shells: kernels the rules reject keep their parameters (program_with_shells).
    Only kernels the runtimes can launch: a CPointer parameter takes an address, which they do not pass."""
    program = program_with_shells(info, options or Options()) if shells else build_program(info, options or Options())
    refuse_pointers(program)
    refuse_unlaunchable(program)
    return program


def refuse_pointers(program) -> None:
    """A UserError naming the first kernel parameter declared CPointer(...): numba2cuda.load, the CPU runtime and
    verify pass arrays, while Numba passes such a parameter an integer address."""
    for fn in program.kernels:
        for p in fn.params:
            if p.array is not None and p.array.pointer:
                raise UserError(f"{Path(program.info.path).name}: error: kernel '{getattr(fn, 'python_name', fn.name)}'"
                                f" takes '{p.name}' as a CPointer (an address), which numba2cuda.load, verify and the "
                                "CPU runtime do not pass\n    hint: translate it and launch its launcher with the "
                                "pointer from your own code, or declare the parameter as an array (uint8[::1])")


def sources(path, options: Options | None = None, shells: bool = False):
    """(program, kernel .cu text, binding .cpp text) for a Numba module. shells: kernels the rules reject get
    their launcher and binding anyway, for a .cu given from elsewhere (the LLM backend's, a hand-written one)."""
    options = options or Options()
    program = program_for(parse_file(path, options.import_module, options), options, shells)
    name = Path(path).name
    return program, render_program(program, name), render_bindings(program, name)


def is_dispatcher(obj) -> bool:
    """A Numba CUDA kernel object (what @cuda.jit makes), on the GPU target or the simulator."""
    return type(obj).__name__ in ("CUDADispatcher", "FakeCUDAKernel") and (
        hasattr(obj, "py_func") or hasattr(obj, "fn"))


def kernel_sources(kernel, options: Options | None = None):
    """(program, .cu, .cpp, source path) of one kernel object the caller holds: its source is found from its
    function, and its free names (globals and closure cells: a factory's parameters) are read from the object
    itself, as Numba reads them when it compiles. Nothing is run."""
    from dataclasses import replace

    from ..frontend.importmode import MAX_ARRAY_BYTES
    from ..frontend.module import parse_source
    from ..frontend.probe import describe_dispatcher

    result, arrays = describe_dispatcher(kernel, MAX_ARRAY_BYTES)
    path = result["kernels"][0]["file"]
    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: error: cannot read the source of kernel {result['kernels'][0]['name']!r}: "
                        f"{exc}") from None
    info = parse_source(source, path, imported=(result, arrays))
    key = info.imported_keys[0]
    if key is None:
        raise UserError(f"{path}: error: the function of kernel {result['kernels'][0]['name']!r} "
                        f"(line {result['kernels'][0]['line']}) was not found in its source")
    program = program_for(info, replace(options or Options(), kernels=[key]))  # refuses CPointer kernels too
    name = Path(path).name
    return program, render_program(program, name), render_bindings(program, name), path


def load_options(specialize: dict | None = None, types: dict | str | None = None, kernels=None,
                 assume_nonnegative: bool = True, import_module: str | None = None) -> Options:
    """The translation options of load()'s keyword arguments."""
    if isinstance(types, str):
        types = T.parse_types_option(types)
    return Options(kernels=list(kernels or []), types=dict(types or {}), specialize=dict(specialize or {}),
                   assume_nonnegative=assume_nonnegative, import_module=import_module)


def load(path, *, specialize: dict | None = None, types: dict | str | None = None, kernels=None,
         assume_nonnegative: bool = True, extra_cuda_cflags=(), progress: bool = True,
         cu_text: str | None = None, import_module: str | None = None):
    """Translate, build (cached by content) and load a Numba module's kernels as drop-in replacements.

    path: the module's file, or a kernel object (a Numba dispatcher, however made: a decorator, a factory's
    closure, cuda.jit(sig)(fn)); for a kernel object the drop-in kernel is returned, launched as the original
    is (kernel[grid, block](...)), its free names taken from the object as Numba takes them.
    import_module: "sim" or "gpu" to import the module (see `numba2cuda translate --import-module`).

    specialize: {"tw": (8, 16, 32)} per parameter, or {"*": ()} to build only generic kernels.
    The autotune table beside the module (<stem>.n2c-tune.json, from `numba2cuda bench --autotune --record`),
    if any, answers kernel.tuned(param, size, default); it never changes a value a launch passes.
    cu_text: a (hand-edited) translation to build instead of a fresh one; its launchers must keep the
    fresh translation's signatures, since the bindings come from the module.
    """
    from ..build import build_extension
    from .tuning import read_tuning, tuning_path

    options = load_options(specialize, types, kernels, assume_nonnegative, import_module)
    if is_dispatcher(path):
        if cu_text is not None:
            raise UserError("numba2cuda.load: error: cu_text= needs the module's path, not a kernel object")
        program, cu_text, cpp_text, source_path = kernel_sources(path, options)
        ext = build_extension(extension_name(source_path), cu_text, cpp_text,
                              extra_cuda_cflags=[*nvcc_flags(program), *extra_cuda_cflags], progress=progress)
        module = Module(source_path, program, ext, cu_text, cpp_text)
        return module.kernels[getattr(program.kernels[0], "python_name", entry_name(program.kernels[0]))]
    program, fresh_cu, cpp_text = sources(path, options, shells=cu_text is not None)
    cu_text = fresh_cu if cu_text is None else cu_text
    ext = build_extension(extension_name(path), cu_text, cpp_text,
                          extra_cuda_cflags=[*nvcc_flags(program), *extra_cuda_cflags], progress=progress)
    return Module(str(path), program, ext, cu_text, cpp_text, read_tuning(tuning_path(path)))
