"""ModuleInfo -> Program: every requested kernel and the device functions it calls, lowered, typed and legalized."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ..ir import nodes as ir
from ..analysis.calls import device_calls, inherit_per_call, reachable_functions
from ..analysis import specialize
from ..analysis.counters import narrow_counters
from ..ir import typesys as T
from ..errors import Unsupported, UserError
from ..ir.facts import mark_written
from ..frontend.module import FunctionInfo, ModuleInfo
from ..frontend.percall import per_call_note
from ..frontend.unknowncalls import unread_calls_below
from ..stack import deep_stack
from .legalize import Legalizer
from .ufuncs import build_ufunc_kernels
from ..frontend.scan import find_nodes, returns_a_value
from .kernel_types import called_not_launched, kernel_types_of, signature_suffixes
from .names import name_program
from .selection import selected_kernels, unbound_decorator
from ..frontend.stmt import FunctionLowerer
from ..frontend.webs import parallel_nodes, split_webs
from ..analysis.dataflow import walk_statements
from ..analysis.typer import Typer, converted


@dataclass
class Options:
    kernels: list[str] = field(default_factory=list)  # empty: all kernels
    types: dict = field(default_factory=dict)  # --types: param name -> type
    assume_nonnegative: bool = True
    specialize: dict = field(default_factory=dict)  # --specialize: param -> values; {"*": ()} for none
    import_module: str | None = None  # --import-module: "sim" or "gpu" (frontend/importmode.py); None: source only
    types_text: str = ""  # --types naming a type only the module defines (a structured dtype): read with it
    # translate's C output may hold no kernel: --kernel naming a @cuda.jit that returns a value, which Numba compiles
    # only as a device function, gives that __device__ function alone (what builds and launches need is a kernel)
    device_code_alone: bool = False


@dataclass(eq=False)
class _SelfCall:
    """A device function's call of itself, met while it is typed: its signature gives the result, and the call
    is pointed at the function once it is built."""
    return_type: object
    params: list = field(default_factory=list)
    per_call: list = field(default_factory=list)


@dataclass
class Program:
    info: ModuleInfo
    options: Options
    kernels: list = field(default_factory=list)
    instances: dict = field(default_factory=dict)  # (name, param types) -> ir.Function
    helpers: set = field(default_factory=set)
    in_progress: set = field(default_factory=set)
    building: list = field(default_factory=list)  # the keys of the functions being built, innermost last
    notices: list = field(default_factory=list)  # Diagnostics of options ignored, printed as notes
    c_names: dict = field(default_factory=dict)  # C name -> how many functions asked for it
    ufuncs: dict = field(default_factory=dict)  # name -> lower.ufuncs.UfuncInfo (@vectorize/@guvectorize)
    device_roots: list = field(default_factory=list)  # device functions --kernel named (never launched)

    # ------------------------------------------------------------ device functions
    def c_name(self, name: str) -> str:
        """NAME, or NAME_2, NAME_3 ... when functions of several scopes (or signatures) share a name."""
        count = self.c_names.get(name, 0) + 1
        self.c_names[name] = count
        return name if count == 1 else f"{name}_{count}"

    def instantiate(self, name: str, arg_types: list, node, arg_nodes=None) -> ir.Function:
        fi = self.info.functions[name]  # NAME: the function's key (a DeviceCall's key)
        name = fi.name
        # like Numba: a signature fixes the types, otherwise each argument-type tuple gets its own function
        types = list(fi.signature[1]) if fi.signature else list(arg_types)
        for k, (param, want, got) in enumerate(zip(fi.params, types, arg_types)):
            if type(want) is not type(got) and T.Tuple in (type(want), type(got)) or \
                    isinstance(want, T.Array) != isinstance(got, T.Array) or (
                    isinstance(want, T.Array) and (want.dtype, want.ndim) != (got.dtype, got.ndim)):
                at = arg_nodes[k] if arg_nodes and arg_nodes[k] is not None else node
                raise Unsupported(at, f"argument '{param}' of '{name}'",
                                  f"the signature asks for {want}, the call passes {got}",
                                  "pass a value of the signature's type, or change the signature")
        key = (fi.key, tuple(types))
        if key in self.instances:
            return self.instances[key]
        if key in self.in_progress:
            if self.building and self.building[-1] == key and fi.signature and \
                    isinstance(fi.signature[0], (T.Scalar, T.Tuple)):
                return _SelfCall(fi.signature[0])  # fib1(n - 1) of `@cuda.jit("i8(i8)", device=True) def fib1`
            mutual = bool(self.building) and self.building[-1] != key
            why = "it calls a function that calls it back" if mutual else \
                "its result type is known only from its own result"
            raise Unsupported(node, f"recursive call to '{name}'", f"numba2cuda translates a device function that "
                              f"calls itself when a signature gives its result type, and here {why}",
                              "make it one function that calls itself, or a loop" if mutual else
                              "give it a signature, @cuda.jit(\"int64(int64)\", device=True), or rewrite it as a loop")
        self.in_progress.add(key)
        self.building.append(key)
        try:
            fn = self._build(fi, types, legalize=False)  # legalized once every caller has told its bounds
        finally:
            self.in_progress.discard(key)
            self.building.pop()
        for call in device_calls(fn.body):
            if isinstance(call.target, _SelfCall):
                call.target = fn  # C calls the function by its own name
        declared = fi.signature[0] if fi.signature else None
        if isinstance(declared, T.Scalar) and isinstance(fn.return_type, T.Scalar) and fn.return_type != declared:
            # `@cuda.jit("int32(int32)", device=True)` returning a + a (int64): Numba converts the result to the
            # signature's type, and callers (or a C caller of the function alone) get that type
            for ret in walk_statements(fn.body):
                if isinstance(ret, ir.Return) and len(ret.values) == 1:
                    ret.values[0] = converted(ret.values[0], declared)
                    ret.values[0].type = declared
            fn.return_type = declared
        fn.c_name = self.c_name(name)
        self.instances[key] = fn
        self.notices += [n for n in fi.notices if n not in self.notices]
        return fn

    def _build(self, fi: FunctionInfo, types: list, legalize=True) -> ir.Function:
        reporter = self.info.reporter
        known = len(reporter.diagnostics)
        while True:
            lowerer = FunctionLowerer(fi.scope or self.info, fi, types)
            fn = lowerer.lower()
            if len(reporter.diagnostics) == known or not self._split_rebound(fi, lowerer.rebound):
                break
            del reporter.diagnostics[known:]  # the refused rebindings are variables of their own now: again
        if len(reporter.diagnostics) > known:
            # a device function it calls into a module not read fails on its own first: those errors lead
            view = fi.scope or self.info
            below = []
            for exc in unread_calls_below(view, fi.node, view.functions):
                diag = reporter.make(exc.node, exc.construct, exc.message, exc.hint)
                if diag not in below and diag not in reporter.diagnostics:
                    below.append(diag)
            reporter.diagnostics[known:known] = below
            raise UserError(reporter.diagnostics)  # this function's own problems: do not type it
        fn.arrays = lowerer.arrays
        fn.helpers = set(lowerer.helpers)
        fn.foreign = dict(lowerer.foreign)
        try:
            Typer(fn, self, reporter).run()
        except Unsupported as exc:
            reporter.add_unsupported(exc)
        if len(reporter.diagnostics) > known:
            raise UserError(reporter.diagnostics)
        narrow_counters(fn)
        if legalize:
            self.legalize(fn)
        _propagate_writes(fn)
        return fn

    def _split_rebound(self, fi: FunctionInfo, names: set) -> bool:
        """Give each web of the NAMES a rebinding was refused for a name of its own, as Numba's SSA gives each a
        variable (webs.py); False where none has more than one web."""
        taken = {n.value for n in find_nodes((fi.scope or self.info).module, lambda n: isinstance(n, cst.Name))}
        split = False
        for name in sorted(names):
            parted = split_webs(fi.node, name, taken)
            if parted is not None:
                self.info.reporter.relocate(parallel_nodes(fi.node, parted[0]))
                fi.node = parted[0]
                split = True
        return split

    def legalize(self, fn: ir.Function) -> None:
        try:
            Legalizer(fn, fn.helpers, self.options.assume_nonnegative).run()
        except Unsupported as exc:
            self.info.reporter.add_unsupported(exc)
            self.info.reporter.raise_if_any()
        self.helpers |= fn.helpers

    # ------------------------------------------------------------ kernels
    def add_kernel(self, fi: FunctionInfo) -> None:
        """One C kernel per signature (Numba's dispatcher compiles each; the drop-in picks by argument types)."""
        if fi.is_device and fi.ufunc is None:  # --kernel named it, and translate writes device code alone
            self._add_device_root(fi, "--kernel names it")
            return
        caller = called_not_launched(self.info, fi) if returns_a_value(fi.node) else None
        if caller is not None:
            # numba-cuda's device-function tests: a @cuda.jit that returns x + 1, which only a kernel calls
            where = f"line {caller[1]}" + (f", {caller[2]}" if caller[2] else "")
            why = f"returns a value, so Numba compiles it only as a device function where '{caller[0]}' calls it " \
                  f"({where}), and cannot launch it"
            if not self.options.kernels:  # the whole file: build_program notes that the caller carries it
                raise Unsupported(fi.node.name, f"kernel '{fi.name}'", why,
                                  f"translate '{caller[0]}', which carries it")
            if not self.options.device_code_alone:
                raise Unsupported(fi.node.name, f"kernel '{fi.name}'", why, f"name '{caller[0]}', which carries it; "
                                  "`numba2cuda translate` (C output, the default --emit) writes this one as the "
                                  "__device__ function it is")
            self._add_device_root(fi, why, caller[0])
            return
        # a kernel made in each iteration of a loop: one C kernel per iteration, launched by a name of its own
        variants = [(f"_{label}", one) for label, one in fi.iterations] or [("", fi)]
        taken = {f.name for f in self.info.functions.values() if not f.iterations} | set(self.info.constants)
        while fi.iterations and any(fi.name + label in taken for label, _ in variants):  # a kernel k_1 of its own
            variants = [("_" + label, one) for label, one in variants]
        # each iteration's own signatures: `@cuda.jit((ty[::1],))` in `for ty in (float32, int64)` names the
        # iteration's type
        own = [(label, variant, variant.signatures if len(variant.signatures) > 1 else [variant.signature])
               for label, variant in variants]
        for label, variant, signature, suffix in ((label, variant, sig, suffix) for label, variant, sigs in own
                                                  for sig, suffix in zip(sigs, signature_suffixes(sigs))):
            try:
                types = kernel_types_of(self.info, variant, self.options, signature)
            except Unsupported:
                if self.info.declared_types_broken:  # already reported where the declaration went wrong
                    raise UserError(self.info.reporter.diagnostics) from None
                raise
            fn = self._build(variant, types)
            fn.c_name = self.c_name(fi.name + label + suffix)
            fn.python_name = fi.name + label  # the name a launch uses; several signatures share it
            inherit_per_call(fn)
            if fn.per_call:  # a kernel made per call: its template parameters are that call's values
                note = per_call_note(self.info, fi, [py for py, _, _ in fn.per_call])
                fi.notices += [note] if note not in fi.notices else []
            else:
                specialize.plan(fn, self.options.specialize)
            self.kernels.append(fn)
        if fi.iterations:
            names = ", ".join(fi.name + label for label, _ in variants)
            loop = self.info.code(fi.loop.target), self.info.code(fi.loop.iter)
            self.notices.append(self.info.reporter.make(
                fi.node.name, f"kernel '{fi.name}'", f"defined in the loop `for {loop[0]} in {loop[1]}` (line "
                f"{self.info.reporter.location(fi.loop).line}), so Numba compiles a kernel per iteration, each with "
                f"that iteration's values: translated as {len(variants)} kernels, {names}"))
        self.notices += [n for n in fi.notices if n not in self.notices]

    def _add_device_root(self, fi: FunctionInfo, why: str, carrier: str | None = None) -> None:
        """--kernel naming a device function, or a @cuda.jit that only a kernel calls (which Numba compiles as one):
        that __device__ function alone, typed by --types or its signature (no launch here says how)."""
        what = f"{'device function' if fi.is_device else 'kernel'} '{fi.name}'"
        try:
            types = kernel_types_of(self.info, fi, self.options)
        except Unsupported:
            spelled = f"{fi.params[0]}=int32, ..." if fi.params else ""
            carried = f"translate '{carrier}', which carries it; or " if carrier else ""
            raise Unsupported(fi.node.name, what, why + ", and nothing gives its parameters' types",
                              f"{carried}pass --types \"{spelled}\" to translate it as the __device__ function it "
                              "is") from None
        # kernel_types_of passes a record by pointer, as a launch does; a device function takes the record itself
        types = [t.dtype if isinstance(t, T.Array) and t.ndim == 0 else t for t in types]
        if not fi.is_device:  # the copy a kernel's call reaches
            fi = self.info.functions.setdefault(f"{fi.key}.device", fi.device_copy())
        fn = self.instantiate(fi.key, types, fi.node)
        if fn.return_type == T.VOID and returns_a_value(fi.node):
            # it returns one of its arrays, which its callers take as that argument: no C result to write alone
            raise Unsupported(fi.node.name, what, "returns an array (one it was given), which Numba hands back as "
                              "the array object; a C function alone has no such result",
                              "translate a kernel that calls it, which carries it")
        self.device_roots.append(fn)
        self.notices.append(self.info.reporter.make(fi.node.name, what, f"{why}: translated as that __device__ "
                                                    "function alone, with no kernel to launch"))

    def device_functions(self) -> list:
        """Instances reachable from the kernels (and the device functions --kernel named), callees first."""
        reached = reachable_functions(self.kernels + self.device_roots)
        return reached + [fn for fn in self.device_roots if fn not in reached]


def _propagate_writes(fn: ir.Function) -> None:
    """An array written by a device function is written by its caller too (no const pointer may reach it)."""
    for call in device_calls(fn.body):
        for arg, param in zip(call.args, call.target.params):
            if isinstance(arg, ir.ArrayRef) and param.array is not None and param.array.written:
                mark_written(arg.array)


@deep_stack  # the lowering and the typer recurse once per level of an expression
def build_program(info: ModuleInfo, options: Options) -> Program:
    kernels = selected_kernels(info, options)
    if not kernels:
        info.reporter.raise_if_any()  # a decorator problem may be why no kernel was found
        for fn, _, _ in list(info.plain_functions.values()):
            unbound = unbound_decorator(info, fn) if fn.decorators else None
            if unbound is not None:
                info.reporter.add(unbound[0], f"@{info.code(unbound[0])}", f"names '{unbound[1]}', which this module "
                                  "never imports or defines (Python stops here with a NameError)",
                                  "add the import: from numba import cuda")
                info.reporter.raise_if_any()
        info.reporter.add(None, "no @cuda.jit kernel found", "this module defines no function decorated with @cuda.jit",
                          "decorate a kernel with @cuda.jit (from numba import cuda); a kernel the module makes when "
                          "it runs is found with --import-module")
        info.reporter.raise_if_any()
    program = Program(info, options)
    program.notices += info.notices
    for fi in kernels:
        try:
            if fi.ufunc is not None:
                program.ufuncs[fi.name] = build_ufunc_kernels(program, fi)
                continue
            program.add_kernel(fi)
        except Unsupported as exc:
            caller = called_not_launched(info, fi) if not options.kernels and len(kernels) > 1 else None
            if caller is not None and (exc is fi.launch_refusal or
                                       exc.construct in (f"kernel '{fi.name}' without types", f"kernel '{fi.name}'")):
                # the whole file: a @cuda.jit only another kernel calls is a device function there, carried
                where = f"line {caller[1]}" + (f", {caller[2]}" if caller[2] else "")
                program.notices.append(info.reporter.make(fi.node.name, f"kernel '{fi.name}'", "not translated as a "
                                                          f"kernel of its own: nothing in this file launches it, and "
                                                          f"'{caller[0]}' ({where}) calls it as a device function, "
                                                          "which its translation carries"))
                continue
            info.reporter.add_unsupported(exc)
        except UserError:
            if not info.reporter.diagnostics:
                raise  # not a located problem of the source (a bad option): report it as it is
            # a located problem, already recorded: keep going so one run reports every kernel's problems
    info.reporter.raise_if_any()
    # notes about values the kernels read (a default taken for sys.argv), known only once they are lowered
    program.notices += [n for n in info.notices if n not in program.notices]
    for fn in reversed(program.device_functions()):  # callers first: each learns its arguments' bounds
        program.legalize(fn)
    info.reporter.raise_if_any()
    name_program(program)
    return program
