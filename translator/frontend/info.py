"""What the frontend learns of a module before lowering: its functions (FunctionInfo) and names (ModuleInfo).

Kept apart from module.py, which fills them in, so that names.py and constants.py (which module.py
uses) can take a ModuleInfo without importing their caller.

A kernel defined inside a function (the numba-cuda doc-example style) sees that function's imports and
local constants as Numba does (as closure variables, frozen when the kernel compiles): its FunctionInfo
carries a `scope`, a ModuleInfo view whose name tables are the module's overlaid with the enclosing
functions'. Everything else in the view (the source, the reporter, the module's function table) is shared.
"""

from __future__ import annotations

from collections import ChainMap
from dataclasses import dataclass, field, replace

import libcst as cst

from ..errors import Reporter

CHAINED = ("functions", "failed_functions", "plain_functions", "overloads")  # a child scope's, over its parent's
STOOD_IN = "(the import stood in for it)"  # ends the reason of a name the import mode gave a stand-in


@dataclass
class FunctionInfo:
    name: str  # what a launch calls it: the def's name, or the name cuda.jit(sig)(fn) is bound to
    node: cst.FunctionDef
    is_device: bool
    params: list[str]
    signature: tuple | None  # (return type or None, [param types]) from the decorator: the first one
    annotations: dict  # param -> type, from annotations
    options: dict
    enclosing: cst.FunctionDef | None  # set for kernels defined inside a function
    key: str = ""  # unique in the module: the name, or "outer.name" for a function defined inside another
    scope: ModuleInfo | None = None  # the names its body sees; None: the module's
    signatures: list = field(default_factory=list)  # every signature; several: one C function each
    notices: list = field(default_factory=list)  # Diagnostics of options ignored (printed as notes)
    also_known_as: set = field(default_factory=set)  # other names --kernel accepts (the def's, a binding's)
    site: cst.CSTNode | None = None  # where it was made (decorator or cuda.jit(...)(fn) call), for errors
    listed: bool = True  # False: made only through a factory call or another kernel (not translated alone)
    ufunc: object = None  # a frontend.ufuncs.UfuncSpec for @vectorize/@guvectorize(target="cuda")
    defaults: dict = field(default_factory=dict)  # param -> its default value's expression (`def f(x, k=2)`)
    # why its signature is known only when code runs ("'name', which <reason>"), and whether the import gives it
    unread_signature: tuple = ()
    # a function defined inside a kernel: the names of the kernel it reads, passed to it as trailing arguments (the
    # values they hold at the call, as Numba's inlining of the closure reads them)
    captured: tuple = ()
    device_arrays: tuple = ()  # of captured: the module's device arrays it reads (frontend/inner.py)
    # an option numba-cuda's cuda.jit does not have (`nopython=True`): the Unsupported a launch of it meets, where
    # the dispatcher makes the kernel; a kernel that calls it compiles it as a device function, without the option
    launch_refusal: object = None
    call_notices: list = field(default_factory=list)  # the notes its device copy prints (that option ignored)
    # a kernel defined in a loop over values the source spells (frontend/unroll.py): (label, FunctionInfo) of each
    # iteration, this one first, each seeing its iteration's values; `loop` is that for statement
    iterations: list = field(default_factory=list)
    loop: object = None

    def __post_init__(self):
        self.key = self.key or self.name
        if not self.signatures and self.signature is not None:
            self.signatures = [self.signature]

    def device_copy(self) -> FunctionInfo:
        """This kernel as device code calls it: numba-cuda compiles a kernel called from a kernel as a device
        function (its dispatcher's call template), a copy beside the kernel, never listed as a kernel itself."""
        return replace(self, is_device=True, key=f"{self.key}.device", listed=False, notices=list(self.call_notices),
                       also_known_as=set(), launch_refusal=None, call_notices=[], iterations=[], loop=None)


@dataclass
class ModuleInfo:
    path: str
    source: str
    module: cst.Module
    reporter: Reporter
    aliases: dict[str, str] = field(default_factory=dict)  # local name -> qualified name
    constants: dict[str, object] = field(default_factory=dict)  # name -> int|float|bool|tuple|ConstArray|Typed
    constant_nodes: dict[str, cst.CSTNode] = field(default_factory=dict)
    nonconstant: dict[str, str] = field(default_factory=dict)  # module-level name -> why kernels cannot use it
    functions: dict[str, FunctionInfo] = field(default_factory=dict)
    failed_functions: dict = field(default_factory=dict)  # name of a @cuda.jit function whose header failed -> key
    declared_types: dict = field(default_factory=dict)  # kernel -> {param: type}, from NUMBA2CUDA_TYPES
    declared_type_nodes: dict = field(default_factory=dict)  # kernel -> its key's node, for errors
    declared_types_broken: bool = False  # reported; kernels then lacking types are not reported again
    # --- shared by a module and its scope views (the same objects)
    deferred: dict = field(default_factory=dict)  # function key -> [Diagnostic] of its header, reported if used
    deferred_nodes: dict = field(default_factory=dict)  # function key -> its FunctionDef, for a failed header
    emitted_constants: dict = field(default_factory=dict)  # C name -> value of constants from enclosing scopes
    declared_devices: dict = field(default_factory=dict)  # id of a cuda.declare_device call -> its ffi.Foreign
    needs_run: set = field(default_factory=set)  # names whose value only running the module gives
    lambdas: dict = field(default_factory=dict)  # a kernel's `f = lambda v: ...` -> the def it is read as
    # f -> (where, why, False): an @overload(f) that chooses by the types; (where, API, True): f is written in LLVM IR
    overloads: dict = field(default_factory=dict)
    value_nodes: dict = field(default_factory=dict)  # name -> the expression assigned to it (once)
    history: dict = field(default_factory=dict)  # name -> [(line, expression)] of straight-line assignments, or None
    mutations: dict = field(default_factory=dict)  # array name -> lines where its scope may change it in place
    plain_functions: dict = field(default_factory=dict)  # name -> (FunctionDef without a jit decorator, its view)
    notices: list = field(default_factory=list)  # module-wide notes (Diagnostics)
    # name -> a note told where a kernel reads it: its value took sys.argv as empty, a function rebinds it
    value_notes: dict = field(default_factory=dict)
    imports_numbapro: bool = False  # `from numbapro import cuda`: read as numba (said once, in a note)
    star_imports: list = field(default_factory=list)  # modules of `from X import *` numba2cuda could not read
    imported: object = None  # import mode: the values the module's run gave (frontend.importmode)
    import_failed: object = None  # import mode: the note saying why importing failed (the source was read)
    imported_keys: list = field(default_factory=list)  # per dispatcher the run made: its function's key, or None
    root: ModuleInfo | None = None  # a scope view's module, or the module that imports this one's functions
    # an enclosing function's own names -> their kind ("int", "bool", "float", None, or the cst.Tuple a name is bound
    # to once, whose items are such values): values of one call, which Numba bakes into the kernel that call makes
    # (frontend/percall.py)
    per_call: dict = field(default_factory=dict)
    records: dict | None = None  # the module's structured dtypes by name (frontend.dtypes), once read
    run_records: dict = field(default_factory=dict)  # import mode: name -> Numba's type of a record the run made
    imported_records: dict = field(default_factory=dict)  # `from .defaults import State`: name -> its Record

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    @property
    def module_info(self) -> ModuleInfo:
        """The translated module: a scope view's, or (for a module whose device functions it imports) the
        importer's, whose constant names and function table they share."""
        info = self
        while info.root is not None:
            info = info.root
        return info

    def view(self, **tables) -> ModuleInfo:
        """A scope view: these name tables, everything else shared with this module."""
        return replace(self, root=self.module_info, **tables)

    def child(self, **tables) -> ModuleInfo:
        """The view of a scope inside this one: copies of its name tables to bind in, and its function tables
        chained over this one's; TABLES, where given, are used instead (shared with another view)."""
        own = dict(aliases=dict(self.aliases), constants=dict(self.constants), nonconstant=dict(self.nonconstant),
                   value_nodes=dict(self.value_nodes), history={}, needs_run=set(self.needs_run),
                   per_call=dict(self.per_call), **{name: ChainMap({}, getattr(self, name)) for name in CHAINED})
        return self.view(**{**own, **tables})

    def constant_c_name(self, name: str, value) -> str | None:
        """The C name a constant is declared under: its own, or NAME_2, NAME_3 ... for a constant of an enclosing
        function (or a factory's parameter) whose name the module or another scope gives another value."""
        root = self.module_info
        if name in root.constants and self.constants.get(name) is root.constants[name]:
            return name
        for k in range(1, 100):
            c_name = name if k == 1 else f"{name}_{k}"
            if c_name in root.constants and not (k == 1 and _same(root.constants[c_name], value)):
                continue
            known = root.emitted_constants.setdefault(c_name, value)
            if _same(known, value):
                return c_name
        return None

    def constant_value(self, name: str):
        """The value of a constant a translation declares by name."""
        root = self.module_info
        return root.constants[name] if name in root.constants else root.emitted_constants[name]

    def report_deferred(self, key: str) -> None:
        for diag in self.module_info.deferred.get(key, ()):
            if diag not in self.reporter.diagnostics:
                self.reporter.diagnostics.append(diag)


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b
