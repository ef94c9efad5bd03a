"""A kernel's parameter types: --types over the module's NUMBA2CUDA_TYPES over its signature or annotations,
a default's kind, numba.cuda.random's states; and, where none says, why (another kernel calls it, a signature
only the run gives)."""

from __future__ import annotations

import functools

import libcst as cst

from ..errors import Unsupported, UserError
from ..frontend.dtypes import named_record, record_spellings
from ..frontend.module import FunctionInfo
from ..frontend.runhint import with_run_hint
from ..frontend.scan import find_nodes, random_state_params
from ..ir import typesys as T


def kernel_types_of(info, fi: FunctionInfo, options, signature=None) -> list:
    """A kernel's parameter types: --types over the module's NUMBA2CUDA_TYPES over its signature/annotations.
    Raises Unsupported when some are unknown, or when the kernel has an option Numba refuses at its launch."""
    if fi.launch_refusal is not None:
        raise fi.launch_refusal
    if options.types_text:
        options.types, options.types_text = module_types(info, options.types_text), ""
    types = kernel_param_types(fi, {**info.declared_types.get(fi.name, {}), **options.types}, signature, info)
    # a record argument is Numba's pointer to one record, copied in and back out around the launch: a 0-d array
    return [named_record(T.Array(t, 0, "C") if isinstance(t, T.Scalar) and t.kind == "r" else t, info)
            for t in types]


def module_types(info, text: str) -> dict:
    """--types whose names the module gives (`ps=particle[:]` of `particle = np.dtype([...])`)."""
    spellings = record_spellings(info)
    try:
        return T.parse_types_option(text, spellings)
    except T.TypeStringError as exc:
        known = f" (the module's structured dtypes: {', '.join(spellings)})" if spellings else ""
        raise UserError(f"--types: error: {exc}{known}\n    hint: write name=type pairs, e.g. \"m=float32[:, ::1], "
                        "tw=int32\"; a record array as its dtype's name in the module (ps=particle[:]) or as "
                        "numba.typeof prints it (see numba2cuda translate --help)") from None


def signature_suffixes(signatures: list) -> list[str]:
    """C name suffixes of a kernel's signatures: "" for one; else the element types where they differ
    ("_float32", "_float64"), numbered where that does not tell them apart."""
    if len(signatures) <= 1:
        return [""]
    columns = list(zip(*[sig[1] for sig in signatures]))
    differing = [k for k, col in enumerate(columns) if len(set(col)) > 1]
    names = []
    for sig in signatures:
        dtypes = []
        for k in differing:
            t = sig[1][k]
            name = str(getattr(t, "dtype", t))
            if name not in dtypes:
                dtypes.append(name)
        names.append("_" + "_".join(dtypes) if dtypes else "")
    if len(set(names)) < len(names):
        names = [f"_{k}" for k in range(len(signatures))]
    return names


def kernel_param_types(fi: FunctionInfo, override: dict, signature=None, info=None) -> list:
    signature = signature or fi.signature
    # numba.cuda.random's draws take only create_xoroshiro128p_states' arrays, a type no signature string
    # spells: a parameter handed to them as the state needs no declaration (as Numba learns it at the launch)
    states = random_state_params(fi.node)
    types, missing = [], []
    for i, p in enumerate(fi.params):
        t = override.get(p) or (signature[1][i] if signature else None) or fi.annotations.get(p)
        if t is None and p in states:
            t = T.Array(T.XOROSHIRO128P, 1, "C")
        if t is None and p in fi.defaults:  # `epsilon=1e-5`: Numba types the value a launch passes, this one's kind
            t = _literal_type(fi.defaults[p])
        if t is None:
            missing.append(p)
        types.append(t)
    if missing:
        spelled = f"{missing[0]}=float32[:, ::1]"
        caller = called_not_launched(info, fi)
        if caller is not None:  # a @cuda.jit only another kernel calls: a device function there, never launched
            where = f"line {caller[1]}" + (f", {caller[2]}" if caller[2] else "")
            raise Unsupported(fi.node.name, f"kernel '{fi.name}' without types", f"nothing in this file launches it, "
                              f"and '{caller[0]}' uses it ({where}) as a device function, which Numba types by that "
                              "use",
                              f"translate '{caller[0]}', which carries it; or pass --types \"{spelled}, ...\" to "
                              "translate it as a kernel of its own")
        if fi.unread_signature:  # `@cuda.jit(void(filigree_image))`: a signature, of a value only a run gives
            module = (fi.scope or info).module_info
            hint = f"pass --types \"{spelled}, ...\""
            what, at_import = fi.unread_signature
            if module.imported is None and module.import_failed is None and at_import:
                hint = ("translate with --import-module (numba2cuda then imports the module as Numba would and reads "
                        f"the signature's types); or {hint}")
            raise Unsupported(fi.node.name, f"kernel '{fi.name}' without types", f"its signature names "
                              f"{what}", with_run_hint(fi.scope or info, fi.node, hint))
        stray = [n for n in override if n not in fi.params]
        strays = (f"; the types given name {', '.join(repr(n) for n in stray)}, which '{fi.name}' does not have "
                  f"(its parameters: {', '.join(fi.params)})") if stray else ""
        raise Unsupported(fi.node.name, f"kernel '{fi.name}' without types",
                          f"the types of {', '.join(missing)} are unknown (Numba learns them at the first launch)"
                          + strays,
                          with_run_hint(fi.scope or info, fi.node,
                                        "add a signature such as @cuda.jit(\"void(float32[:, ::1], int32)\"), "
                                        f"annotate the parameters, declare NUMBA2CUDA_TYPES = {{\"{fi.name}\": "
                                        f"\"{spelled}, ...\"}} in the module, or pass --types \"{spelled}, ...\""))
    return types


def called_not_launched(info, fi: FunctionInfo, depth: int = 0):
    """(name, line, how) of a function of this file that names FI's kernel (calls it, or passes it to a function
    it calls), where no code of the file launches it (`fi[grid, block](...)`), else None; where that function is
    a kernel only another calls, the one that calls that (up to the kernel that is launched), HOW saying through
    which ("through 'device_func_2'"; "" where it calls FI itself)."""
    module = getattr(info, "module", None)
    # a kernel made in a test method: the method is where it is launched or called (numba-cuda's device_func_1)
    scope = fi.enclosing if fi.enclosing is not None else module
    if module is None or (fi.key != fi.name and fi.enclosing is None):
        return None

    if fi.name in _launched(scope):
        return None
    for other in info.functions.values():
        if other is fi or other.node is None or other.node is fi.node or \
                (fi.enclosing is not None and other.enclosing is not fi.enclosing):
            continue
        uses = _first_reads(other.node).get(fi.name)
        if uses:  # `dsoftmax(x)`, or passed on: `caller(a, callback)`
            if depth < 8 and not other.is_device:  # called in turn: the kernel that is launched carries both
                further = called_not_launched(info, other, depth + 1)
                if further is not None:
                    return further[0], further[1], f"through '{other.name}'"
            return other.name, info.reporter.location(uses).line, ""
    return None


# Each kernel without types asks these of the same nodes (a module of 60 kernels: 60 x 60 walks); the trees are
# immutable and shared by every trial translation of the module, so one walk of each node answers them all.
@functools.lru_cache(maxsize=256)
def _launched(scope) -> frozenset:
    """Names launched in SCOPE: `name[grid, block](...)`."""
    return frozenset(n.func.value.value for n in find_nodes(
        scope, lambda n: isinstance(n, cst.Call) and isinstance(n.func, cst.Subscript)
        and isinstance(n.func.value, cst.Name)))


@functools.lru_cache(maxsize=1024)
def _first_reads(node) -> dict:
    """{name: its first Name node} under NODE."""
    first: dict = {}
    for n in find_nodes(node, lambda n: isinstance(n, cst.Name)):
        first.setdefault(n.value, n)
    return first


def _literal_type(node):
    """int64, float64 or bool for a number literal (what Numba makes of a Python int, float or bool), else None."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    if isinstance(node, cst.Integer):
        return T.INT64
    if isinstance(node, cst.Float):
        return T.FLOAT64
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return T.BOOL
    return None
