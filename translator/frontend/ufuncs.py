"""Numba's other decorators that make GPU code: @vectorize/@guvectorize(target="cuda") -> what the ufunc is made of;
@numba.jit/@njit -> a device function when a kernel calls it.

Numba builds a CUDA ufunc from a device function (the decorated one) and one elementwise kernel per
signature; numba2cuda does the same (lower/ufuncs.py builds the kernels, runtime/ufunc.py the callable
that broadcasts as Numba's does). A decorator for another target (cpu, parallel) is not a CUDA function.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from ..errors import Unsupported
from ..ir import typesys as T
from .names import resolve

CPU_JIT_NAMES = {"numba.jit", "numba.njit"}
UFUNC_DECORATORS = {"numba.vectorize": "vectorize", "cuda.vectorize": "vectorize",
                    "numba.guvectorize": "guvectorize", "cuda.guvectorize": "guvectorize"}
_LAYOUT_RE = re.compile(r"^\s*(\([\w\s,]*\)(?:\s*,\s*\([\w\s,]*\))*)\s*->\s*(\([\w\s,]*\)(?:\s*,\s*\([\w\s,]*\))*)\s*$")


@dataclass
class UfuncSpec:
    kind: str  # "vectorize" | "guvectorize"
    signatures: list = field(default_factory=list)  # [(return type or None, [argument types])]
    inputs: list = field(default_factory=list)  # guvectorize: core dimension names per input, e.g. [["n"], []]
    outputs: list = field(default_factory=list)  # ... per output
    node: object = None  # the decorator, for messages


def cpu_jit(info, fn: cst.FunctionDef) -> bool:
    """Is FN a CPU @numba.jit/@njit function? Numba-cuda compiles one called from a kernel as a device function
    (its cpu_gpu_compat example), typed by the call's arguments: its CPU signature and options do not apply."""
    return any(names_cpu_jit(info, dec.decorator) for dec in fn.decorators)


def names_cpu_jit(info, node) -> bool:
    """Is NODE numba's CPU jit, bare or called with options (`njit`, `numba.jit(nopython=True)`)?"""
    return resolve(info, node.func if isinstance(node, cst.Call) else node) in CPU_JIT_NAMES


def ufunc_decorator(info, fn: cst.FunctionDef, type_text) -> UfuncSpec | None:
    """The UfuncSpec of FN's @vectorize/@guvectorize(target="cuda"), or None; Unsupported for one it cannot read."""
    for dec in fn.decorators:
        call = dec.decorator if isinstance(dec.decorator, cst.Call) else None
        kind = UFUNC_DECORATORS.get(resolve(info, call.func if call else dec.decorator) or "")
        if kind is None:
            continue
        args = [a.value for a in call.args if a.keyword is None] if call else []
        kwargs = {a.keyword.value: a.value for a in call.args if a.keyword is not None} if call else {}
        target = kwargs.get("target")
        on_cuda = resolve(info, call.func if call else dec.decorator).startswith("cuda.") or (
            isinstance(target, cst.SimpleString) and target.evaluated_value == "cuda")
        if not on_cuda:
            return None  # a CPU or parallel ufunc: NumPy's business, not a kernel
        spec = UfuncSpec(kind, node=dec.decorator)
        sigs = args[0] if args else kwargs.get("signatures") or kwargs.get("ftylist")
        if sigs is None:
            raise Unsupported(dec.decorator, f"@{kind} without signatures",
                              "a CUDA ufunc is compiled for the signatures it lists (Numba compiles none lazily)",
                              f"list them: @{kind}(['float32(float32, float32)'], target='cuda')")
        for node in sigs.elements if isinstance(sigs, (cst.List, cst.Tuple)) and not _is_type_tuple(sigs) else [sigs]:
            node = node.value if isinstance(node, cst.Element) else node
            try:
                spec.signatures.append(T.parse_signature(type_text(info, node)))
            except T.TypeStringError as exc:
                raise Unsupported(node, f"@{kind} signature", str(exc),
                                  "write Numba's spelling, e.g. 'float32(float32, float32)'") from None
        if kind == "guvectorize":
            layout = args[1] if len(args) > 1 else kwargs.get("signature")
            if not isinstance(layout, cst.SimpleString) or not _LAYOUT_RE.match(layout.evaluated_value):
                raise Unsupported(layout or dec.decorator, "@guvectorize layout", "needs the core dimensions as a "
                                  "string literal", "e.g. @guvectorize([...], '(n),()->(n)', target='cuda')")
            ins, outs = layout.evaluated_value.split("->")
            spec.inputs, spec.outputs = _dims(ins), _dims(outs)
        for ret, params in spec.signatures:
            _check(spec, ret, params, fn, dec.decorator)
        return spec
    return None


def _is_type_tuple(node) -> bool:
    """guvectorize accepts one signature written as a tuple of types: (float32[:], float32[:])."""
    return isinstance(node, cst.Tuple) and not any(isinstance(e.value, (cst.SimpleString, cst.Call, cst.Tuple))
                                                   for e in node.elements)


def _dims(text: str) -> list:
    return [[d.strip() for d in group.split(",") if d.strip()] for group in re.findall(r"\(([^)]*)\)", text)]


def _check(spec: UfuncSpec, ret, params, fn, node):
    names = [p.name.value for p in fn.params.params]
    if spec.kind == "vectorize":
        if ret is None or not isinstance(ret, T.Scalar) or any(not isinstance(p, T.Scalar) for p in params):
            raise Unsupported(node, "@vectorize signature", "must map scalars to a scalar, e.g. float32(float32)")
        if len(params) != len(names):
            raise Unsupported(node, "@vectorize signature", f"has {len(params)} argument types for "
                              f"{len(names)} parameters")
        return
    if ret not in (None, T.VOID):
        raise Unsupported(node, "@guvectorize signature", "guvectorized functions write their outputs and return "
                          "nothing", "write 'void(float32[:], float32[:])' or a tuple of the argument types")
    if len(params) != len(spec.inputs) + len(spec.outputs) or len(params) != len(names):
        raise Unsupported(node, "@guvectorize signature", f"has {len(params)} argument types, the layout "
                          f"{len(spec.inputs)} inputs and {len(spec.outputs)} outputs, the function "
                          f"{len(names)} parameters")
    for t, dims in zip(params, spec.inputs + spec.outputs):
        if isinstance(t, T.Array) and t.ndim != max(len(dims), 1) or not isinstance(t, T.Array) and dims:
            raise Unsupported(node, "@guvectorize signature", f"{t} does not fit core dimensions ({', '.join(dims)})")
