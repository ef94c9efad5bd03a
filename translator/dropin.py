"""numba module path -> built extension whose kernels launch exactly like Numba's: k[grid, block, stream, shared](*args)."""

from __future__ import annotations

from pathlib import Path

from . import typesys as T
from .bindings import render_bindings
from .frontend import parse_file
from .lower import Options, build_program
from .render import render_program

class Module:
    """The translated kernels of one Numba module, as attributes."""

    def __init__(self, path, program, ext, cu_text, cpp_text):
        from .launch import Kernel  # imports torch: only when kernels are loaded

        self.path = path
        self.cu = cu_text
        self.cpp = cpp_text
        self.extension = ext
        self.kernels = {}
        for fn in program.kernels:
            kernel = Kernel(getattr(ext, fn.c_name), *kernel_metadata(fn))
            self.kernels[fn.c_name] = kernel
            setattr(self, fn.c_name, kernel)

    def __repr__(self):
        return f"<numba2cuda module {self.path}: {', '.join(self.kernels)}>"


def kernel_metadata(fn):
    """(name, parameter names, positions of arrays, positions of arrays the kernel writes, doc) of a kernel."""
    arrays = [i for i, p in enumerate(fn.params) if p.array is not None]
    written = {i for i in arrays if fn.params[i].array.written}
    signature = ", ".join(f"{p.name}: {p.type}" for p in fn.params)
    return fn.c_name, tuple(p.name for p in fn.params), arrays, written, f"{fn.c_name}({signature})"


def sources(path, options: Options | None = None):
    """(program, kernel .cu text, binding .cpp text) for a Numba module."""
    info = parse_file(path)
    program = build_program(info, options or Options())
    name = Path(path).name
    return program, render_program(program, name), render_bindings(program, name)


def load(path, *, specialize: dict | None = None, types: dict | str | None = None, kernels=None,
         assume_nonnegative: bool = True, extra_cuda_cflags=(), progress: bool = True) -> Module:
    """Translate, build (cached by content) and load a Numba module's kernels as drop-in replacements.

    specialize: {"tw": (8, 16, 32)} per parameter, or {"*": ()} to build only generic kernels.
    """
    from .build import build_extension

    if isinstance(types, str):
        types = T.parse_types_option(types)
    options = Options(kernels=list(kernels or []), types=dict(types or {}), specialize=dict(specialize or {}),
                      assume_nonnegative=assume_nonnegative)
    program, cu_text, cpp_text = sources(path, options)
    name = "".join(c if c.isalnum() else "_" for c in Path(path).stem)
    fast_math = ["--use_fast_math"] if any(k.options.get("fastmath") for k in program.kernels) else []
    ext = build_extension(name, cu_text, cpp_text, extra_cuda_cflags=[*fast_math, *extra_cuda_cflags],
                          progress=progress)
    return Module(str(path), program, ext, cu_text, cpp_text)
