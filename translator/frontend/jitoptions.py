"""@cuda.jit(...)'s arguments -> signatures and options: every option numba-cuda's jit accepts is honoured where
CUDA C has its meaning, or ignored with a one-line note; never a traceback.

Signatures come as Numba takes them: a string ("void(float32[:], int32)"), an expression of Numba types
(`void(float32[:], int32)`, `types.UniTuple(float32, 2)(float32)`), a tuple of argument types, a list of
any of these (several signatures: one C function each), a name bound to one of these, or the deprecated
`argtypes=`/`restype=` keywords."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from .dtypes import record_spellings
from ..errors import Unsupported
from ..ir import typesys as T
from ..userimport import comment_starts
from .constants import ConstEvalError, Typed, const_eval, plain_or_tuple
from .names import resolve

if TYPE_CHECKING:
    from .info import ModuleInfo

# option -> what numba2cuda does with it (the note printed when it has no effect)
IGNORED = {
    "debug": "Numba's debug checks (exceptions raised in kernels) are not translated; the CUDA C follows Numba's "
             "default behaviour",
    "opt": "the translation is always built with optimisation",
    "cache": "the translation's builds are cached by content anyway",
    "lto": "link-time optimisation is the CUDA compiler's choice here",
    "shared_memory_carveout": "the driver's default shared memory carveout is used",
    "extensions": "Numba typing extensions are not translated",
    "bind": "it has no meaning in CUDA C",
}
# link=: its files are carried for the functions cuda.declare_device declares without a link= (frontend/ffi.py)
HONOURED = {"device", "fastmath", "lineinfo", "max_registers", "launch_bounds", "inline", "forceinline",
            "boundscheck", "argtypes", "restype", "link"}
KNOWN_JIT_OPTIONS = HONOURED | set(IGNORED)


def read_options(info: ModuleInfo, kwargs: dict, notes: list, unknown: list | None = None) -> dict:
    """{option: value} from the decorator's keywords; NOTES gets (node, construct, message) per option ignored.
    Raises Unsupported for an option numba-cuda does not have, or one it rejects; with UNKNOWN, an option it does
    not have goes there instead (as its Unsupported): numba-cuda refuses it only when the kernel is launched."""
    options = {}
    for key, node in kwargs.items():
        if key == "target" and info.module_info.imports_numbapro and _value(info, node) in ("gpu", "cuda"):
            notes.append((node, "@cuda.jit option 'target'", "NumbaPro's way to ask for the GPU, which cuda.jit "
                          "always compiles for: ignored (numba-cuda has no such option; delete it)"))
            continue
        if key not in KNOWN_JIT_OPTIONS:
            why = {"target": "cuda.jit always compiles for the GPU", "nopython": "a CUDA kernel is always nopython",
                   "parallel": "a CUDA kernel is parallel by its launch"}.get(key, "")
            refusal = Unsupported(node, f"@cuda.jit option '{key}'", "numba-cuda has no such option: compiling the "
                                  f"kernel raises TypeError (unexpected keyword argument '{key}'), so Numba refuses "
                                  "it too", (f"remove it ({why})" if why else "remove it") + "; cuda.jit takes: "
                                  + ", ".join(sorted(KNOWN_JIT_OPTIONS)))
            if unknown is None:
                raise refusal
            unknown.append(refusal)
            continue
        value = _value(info, node)
        if key in ("argtypes", "restype"):
            continue  # read as the signature
        if key == "boundscheck" and value:
            raise Unsupported(node, "@cuda.jit(boundscheck=True)", "Numba does not bounds-check CUDA kernels (it "
                              "raises NotImplementedError)", "remove it; numba2cuda verify checks bounds on the CPU")
        if key in ("launch_bounds", "max_registers") and value is not None:
            value = _launch_numbers(node, key, value)
        if key in IGNORED and value not in (None, False, (), [], "never"):
            if not (key == "opt" and value is True):
                notes.append((node, f"@cuda.jit option '{key}'", f"ignored: {IGNORED[key]}"))
        if key == "fastmath" and value not in (True, False, None):
            notes.append((node, "@cuda.jit option 'fastmath'", "a set of flags is translated as --use_fast_math "
                          "(all of CUDA's fast-math approximations)"))
            value = True
        options[key] = value
    if options.get("launch_bounds") and options.get("max_registers"):
        notes.append((kwargs["max_registers"], "@cuda.jit option 'max_registers'",
                      "ignored: CUDA C takes either __launch_bounds__ or __maxnreg__ on a kernel, and launch_bounds "
                      "is given"))
        options.pop("max_registers")
    return options


def _value(info, node):
    """An option's value: a constant, or its source text when it is not one (only its truth is then used)."""
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    try:
        value = const_eval(info, node)
    except ConstEvalError:
        return info.code(node)
    return value.value if isinstance(value, Typed) else value


def _launch_numbers(node, key, value):
    if isinstance(value, str):  # source text: not a constant of the module
        raise Unsupported(node, f"@cuda.jit option '{key}={value}'", "is not a constant numba2cuda can evaluate "
                          "without running the module", "write a literal or a module-level integer constant, or "
                          "translate with --import-module (numba2cuda then imports the module and reads it)")
    items = value if isinstance(value, tuple) else (value,)
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in items) or not 1 <= len(items) <= (
            3 if key == "launch_bounds" else 1):
        raise Unsupported(node, f"@cuda.jit option '{key}'",
                          "must be a positive integer" + (" or a tuple of 1 to 3" if key == "launch_bounds" else ""),
                          "write a literal or a module-level integer constant")
    return items if key == "launch_bounds" else items[0]


# ------------------------------------------------------------------ signatures

_DOTTED_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_TYPE_MODULES = ("numba.", "np.", "cuda.", "types.")
_FROM_DTYPE_RE = re.compile(r"(?:[A-Za-z_][\w.]*\.)?from_dtype\(\s*([A-Za-z_]\w*)\s*\)")


def string_value(info: ModuleInfo, node, depth: int = 0) -> str:
    """A string a module computes from constants: `"void(float{}[:])".format(bits)` (a scaling library picks
    float32 or float64 signatures so), an f-string, `+` and `%` of strings. Raises ConstEvalError otherwise."""
    if depth > 8:
        raise ConstEvalError("string")
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        if isinstance(value, str):
            return value
        raise ConstEvalError("bytes")
    if isinstance(node, cst.Name) and node.value in info.value_nodes:
        return string_value(info, info.value_nodes[node.value], depth + 1)
    if isinstance(node, cst.FormattedString):
        out = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                out.append(part.value)
                continue
            value = plain_or_tuple(const_eval(info, part.expression))
            value = repr(value) if part.conversion == "r" else str(value) if part.conversion == "s" else value
            spec = "".join(p.value for p in part.format_spec or [] if isinstance(p, cst.FormattedStringText))
            if part.format_spec and len(spec) != sum(len(getattr(p, "value", "x")) for p in part.format_spec):
                raise ConstEvalError("a computed format spec")
            out.append(format(value, spec))
        return "".join(out)
    try:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "format" \
                and not any(a.star for a in node.args):
            template = string_value(info, node.func.value, depth + 1)
            args = [plain_or_tuple(const_eval(info, a.value)) for a in node.args if a.keyword is None]
            kwargs = {a.keyword.value: plain_or_tuple(const_eval(info, a.value)) for a in node.args if a.keyword}
            return template.format(*args, **kwargs)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "str" \
                and "str" not in info.value_nodes and len(node.args) == 1 \
                and node.args[0].keyword is None and not node.args[0].star:
            return str(plain_or_tuple(const_eval(info, node.args[0].value)))
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            return string_value(info, node.left, depth + 1) + string_value(info, node.right, depth + 1)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
            right = plain_or_tuple(const_eval(info, node.right))
            return string_value(info, node.left, depth + 1) % right
    except (IndexError, KeyError, ValueError, TypeError) as exc:
        raise ConstEvalError(str(exc)) from None
    raise ConstEvalError("string")


def type_text(info: ModuleInfo, node) -> str:
    """Source text of a type written as an expression (`nb.float32[:, ::1]`) or a string, unqualified."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        return node.evaluated_value
    if isinstance(node, (cst.FormattedString, cst.Call, cst.BinaryOperation)):
        try:
            return string_value(info, node)  # `"void(float{}[:])".format(bits)`: the signature it computes
        except ConstEvalError:
            pass
    code = _without_comments(info.code(node))
    records = record_spellings(info)
    if "from_dtype" in code:  # `from_dtype(particle)[::1]` in a signature: Numba's record type of that dtype
        code = _FROM_DTYPE_RE.sub(lambda m: records.get(m.group(1), m.group(0)), code)
    return _DOTTED_RE.sub(lambda m: _unqualified(info, m.group(0), records) if not m.group(0).startswith("Record")
                          else m.group(0), code)


def _without_comments(code: str) -> str:
    """CODE with its comments dropped: a signature written over several lines notes what each type is for
    (`types.Array(types.float64, 1, 'C'),   # Query array`)."""
    if "#" not in code:
        return code
    lines = code.splitlines(keepends=True)
    for row, col in reversed(comment_starts(code)):
        lines[row - 1] = lines[row - 1][:col].rstrip() + ("\n" if lines[row - 1].endswith("\n") else "")
    return "".join(lines)


def _unqualified(info, name: str, records: dict) -> str:
    if name in records:  # `particle_t[:]` of `particle_t = numba.from_dtype(particle)`: Numba's record type
        return records[name]
    head = name.split(".")[0]
    if head in info.aliases:
        qualified = info.aliases[head] + name[len(head):]
        if qualified.startswith(("numba", "numpy")) or "." in name:
            return qualified.rsplit(".", 1)[-1]
    if name.startswith(("numba.", "nb.", "np.", "numpy.", "cuda.", "types.")):
        return name.rsplit(".", 1)[-1]
    return name


def signature_node(info: ModuleInfo, node, depth: int = 0, at=None):
    """Follow a name bound to the signature's expression (SIG = "void(float32[:])"): bound once, or, in straight-line
    code, the last binding before AT (the cuda.jit that reads it)."""
    while isinstance(node, cst.Name) and depth < 8:
        history = info.history.get(node.value)
        if at is not None and history and len(history) > 1:
            line = info.reporter.location(at).line
            before = [value for where, value in history if where < line]
            if not before:
                break
            node = before[-1]
        elif node.value in info.value_nodes:
            node = info.value_nodes[node.value]
        else:
            break
        depth += 1
    return node


def read_signatures(info: ModuleInfo, node, at=None) -> list:
    """[(return type or None, [parameter types])] of a jit's first argument (read at AT, the jit's site)."""
    node = signature_node(info, node, at=at)
    if isinstance(node, cst.List) or (isinstance(node, cst.Tuple) and node.elements and all(
            isinstance(signature_node(info, e.value), (cst.SimpleString, cst.ConcatenatedString, cst.Call))
            for e in node.elements)):
        if not node.elements:
            raise Unsupported(node, "signature", "an empty list of signatures", "give at least one signature")
        return [one_signature(info, signature_node(info, e.value)) for e in node.elements]
    return [one_signature(info, node)]


def one_signature(info: ModuleInfo, node):
    if isinstance(node, cst.Tuple):  # a tuple of argument types: the return type is inferred (void for a kernel)
        text = "(" + ", ".join(type_text(info, signature_node(info, e.value)) for e in node.elements) + ")"
    else:
        text = type_text(info, node)
    try:
        return T.parse_signature(text)
    except T.TypeStringError as exc:
        # a record or a datetime: the reason says what to do
        spelling = T.why_unknown(text) == T.NOT_EXTENSIONS and "Record(" not in text
        raise Unsupported(node, "signature", str(exc),
                          "write Numba's spelling, e.g. 'void(float32[:, ::1], int32)'" if spelling else "") from None


def argtypes_signature(info: ModuleInfo, kwargs: dict):
    """The deprecated argtypes=[...], restype=... keywords, as a signature."""
    args = signature_node(info, kwargs["argtypes"])
    if not isinstance(args, (cst.List, cst.Tuple)):
        raise Unsupported(args, "argtypes", "must be a list of Numba types", "pass the signature instead")
    text = "(" + ", ".join(type_text(info, signature_node(info, e.value)) for e in args.elements) + ")"
    if "restype" in kwargs:
        text = type_text(info, signature_node(info, kwargs["restype"])) + text
    try:
        return T.parse_signature(text)
    except T.TypeStringError as exc:
        raise Unsupported(args, "argtypes", str(exc), "write Numba's spelling, e.g. [float32[::1], int32]") from None


def is_jit_name(info: ModuleInfo, node) -> bool:
    return resolve(info, node) == "cuda.jit"
