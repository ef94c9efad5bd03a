"""ModuleInfo -> Program: every requested kernel and the device functions it calls, lowered, typed and legalized."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import nodes as ir
from ..analysis.calls import device_calls, reachable_functions
from ..analysis import specialize
from ..ir import typesys as T
from ..errors import Unsupported, UserError
from ..frontend.module import FunctionInfo, ModuleInfo
from ..stack import deep_stack
from .legalize import Legalizer
from .names import name_program
from ..frontend.stmt import FunctionLowerer
from ..analysis.typer import Typer


@dataclass
class Options:
    kernels: list[str] = field(default_factory=list)  # empty: all kernels
    types: dict = field(default_factory=dict)  # --types: param name -> type
    assume_nonnegative: bool = True
    specialize: dict = field(default_factory=dict)  # --specialize: param -> values; {"*": ()} for none


@dataclass
class Program:
    info: ModuleInfo
    options: Options
    kernels: list = field(default_factory=list)
    instances: dict = field(default_factory=dict)  # (name, param types) -> ir.Function
    helpers: set = field(default_factory=set)
    in_progress: set = field(default_factory=set)

    # ------------------------------------------------------------ device functions
    def instantiate(self, name: str, arg_types: list, node, arg_nodes=None) -> ir.Function:
        fi = self.info.functions[name]
        # like Numba: a signature fixes the types, otherwise each argument-type tuple gets its own function
        types = list(fi.signature[1]) if fi.signature else list(arg_types)
        for k, (param, want, got) in enumerate(zip(fi.params, types, arg_types)):
            if isinstance(want, T.Array) != isinstance(got, T.Array) or (
                    isinstance(want, T.Array) and (want.dtype, want.ndim) != (got.dtype, got.ndim)):
                at = arg_nodes[k] if arg_nodes and arg_nodes[k] is not None else node
                raise Unsupported(at, f"argument '{param}' of '{name}'",
                                  f"the signature asks for {want}, the call passes {got}",
                                  "pass a value of the signature's type, or change the signature")
        key = (name, tuple(types))
        if key in self.instances:
            return self.instances[key]
        if key in self.in_progress:
            raise Unsupported(node, f"recursive call to '{name}'", "CUDA C device functions here cannot recurse",
                              "rewrite it as a loop")
        self.in_progress.add(key)
        try:
            fn = self._build(fi, types, legalize=False)  # legalized once every caller has told its bounds
        finally:
            self.in_progress.discard(key)
        if fi.signature and fi.signature[0] not in (None, T.VOID) and fn.return_type != fi.signature[0]:
            fn.declared_return = fi.signature[0]
        same_name = sum(1 for (n, _) in self.instances if n == name)
        fn.c_name = name if same_name == 0 else f"{name}_{same_name + 1}"
        self.instances[key] = fn
        return fn

    def _build(self, fi: FunctionInfo, types: list, legalize=True) -> ir.Function:
        reporter = self.info.reporter
        known = len(reporter.diagnostics)
        lowerer = FunctionLowerer(self.info, fi, types)
        fn = lowerer.lower()
        if len(reporter.diagnostics) > known:
            raise UserError(reporter.diagnostics)  # this function's own problems: do not type it
        fn.arrays = lowerer.arrays
        fn.helpers = set(lowerer.helpers)
        try:
            Typer(fn, self, reporter).run()
        except Unsupported as exc:
            reporter.add_unsupported(exc)
        if len(reporter.diagnostics) > known:
            raise UserError(reporter.diagnostics)
        if legalize:
            self.legalize(fn)
        _propagate_writes(fn)
        return fn

    def legalize(self, fn: ir.Function) -> None:
        try:
            Legalizer(fn, fn.helpers, self.options.assume_nonnegative).run()
        except Unsupported as exc:
            self.info.reporter.add_unsupported(exc)
            self.info.reporter.raise_if_any()
        self.helpers |= fn.helpers

    # ------------------------------------------------------------ kernels
    def add_kernel(self, fi: FunctionInfo) -> None:
        try:
            types = kernel_types_of(self.info, fi, self.options)
        except Unsupported:
            if self.info.declared_types_broken:  # already reported where the declaration went wrong
                raise UserError(self.info.reporter.diagnostics) from None
            raise
        fn = self._build(fi, types)
        fn.c_name = fi.name
        specialize.plan(fn, self.options.specialize)
        self.kernels.append(fn)

    def device_functions(self) -> list:
        """Instances reachable from the kernels, callees first."""
        return reachable_functions(self.kernels)


def kernel_types_of(info, fi: FunctionInfo, options: Options) -> list:
    """A kernel's parameter types: --types over the module's NUMBA2CUDA_TYPES over its signature/annotations.
    Raises Unsupported when some are unknown."""
    return kernel_param_types(fi, {**info.declared_types.get(fi.name, {}), **options.types})


def kernel_param_types(fi: FunctionInfo, override: dict) -> list:
    types, missing = [], []
    for i, p in enumerate(fi.params):
        t = override.get(p) or (fi.signature[1][i] if fi.signature else None) or fi.annotations.get(p)
        if t is None:
            missing.append(p)
        types.append(t)
    if missing:
        raise Unsupported(fi.node.name, f"kernel '{fi.name}' without types",
                          f"the types of {', '.join(missing)} are unknown (Numba learns them at the first launch)",
                          "add a signature such as @cuda.jit(\"void(float32[:, ::1], int32)\"), annotate the "
                          f"parameters, declare NUMBA2CUDA_TYPES = {{\"{fi.name}\": \"{missing[0]}=float32[:, ::1], "
                          f"...\"}} in the module, or pass --types \"{missing[0]}=float32[:, ::1], ...\"")
    return types


def _propagate_writes(fn: ir.Function) -> None:
    """An array written by a device function is written by its caller too (no const pointer may reach it)."""
    for call in device_calls(fn.body):
        for arg, param in zip(call.args, call.target.params):
            if isinstance(arg, ir.ArrayRef) and param.array is not None and param.array.written:
                root = arg.array
                while root.base is not None:
                    root = root.base
                root.written = True


def selected_kernels(info: ModuleInfo, options: Options) -> list[FunctionInfo]:
    """The module's kernels, or those --kernel names (an unknown name is an error listing the kernels)."""
    kernels = [f for f in info.functions.values() if not f.is_device]
    if options.kernels:
        unknown = [k for k in options.kernels if k not in info.functions]
        if unknown:
            names = ", ".join(sorted(f.name for f in kernels)) or "none"
            raise UserError(f"{info.path}: error: no kernel named {', '.join(unknown)} (kernels here: {names})")
        kernels = [info.functions[k] for k in options.kernels]
    return kernels


@deep_stack  # the lowering and the typer recurse once per level of an expression
def build_program(info: ModuleInfo, options: Options) -> Program:
    kernels = selected_kernels(info, options)
    if not kernels:
        info.reporter.raise_if_any()  # a decorator problem may be why no kernel was found
        info.reporter.add(None, "no @cuda.jit kernel found", "this module defines no function decorated with @cuda.jit",
                          "decorate a kernel with @cuda.jit (from numba import cuda)")
        info.reporter.raise_if_any()
    program = Program(info, options)
    for fi in kernels:
        try:
            program.add_kernel(fi)
        except Unsupported as exc:
            info.reporter.add_unsupported(exc)
        except UserError:
            if not info.reporter.diagnostics:
                raise  # not a located problem of the source (a bad option): report it as it is
            # a located problem, already recorded: keep going so one run reports every kernel's problems
    info.reporter.raise_if_any()
    for fn in reversed(program.device_functions()):  # callers first: each learns its arguments' bounds
        program.legalize(fn)
    info.reporter.raise_if_any()
    name_program(program)
    return program
