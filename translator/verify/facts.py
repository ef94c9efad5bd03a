"""a kernel's typed IR -> what the verifier needs to know of it: which array parameters it reads, writes and
accumulates into with atomics, and which operations may round differently on two correct implementations.

Arrays a kernel both reads and writes are filled with real data (the example's) on both sides instead of a
pre-fill, so that in-place updates and partial outputs need no declaration; write-only arrays get two
different pre-fills and the original is run with the same ones. Device functions are followed through
their calls, an array argument standing for the callee's parameter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..ir import nodes as ir
from ..ir.facts import root_array

# CUDA's documented maximum error of its single- and double-precision functions (CUDA C Programming Guide,
# "Mathematical Functions"), in ULP: what two correct implementations of a call may differ by.
ULP_PER_CALL = {
    "exp": 2, "exp2": 2, "expm1": 1, "exp10": 2, "log": 1, "log2": 1, "log10": 2, "log1p": 1, "sin": 2, "cos": 2,
    "tan": 4, "asin": 2, "acos": 2, "atan": 2, "atan2": 3, "sinh": 3, "cosh": 2, "tanh": 2, "asinh": 3,
    "acosh": 4, "atanh": 3, "pow": 4, "erf": 2, "erfc": 4, "lgamma": 6, "tgamma": 5, "gamma": 5, "cbrt": 1,
    "hypot": 3, "fmod": 0, "sqrt": 0, "fabs": 0, "floor": 0, "ceil": 0, "trunc": 0, "copysign": 0,
    "degrees": 1, "radians": 1, "ldexp": 0, "rsqrt": 2,
    # cmath (the names prefixed c): CPython's algorithms, a few real calls each, in either precision
    "cexp": 4, "clog": 4, "clog10": 4, "csqrt": 3, "csin": 4, "ccos": 4, "csinh": 4, "ccosh": 4, "ctan": 6,
    "ctanh": 6, "cacos": 8, "casin": 8, "catan": 6, "cacosh": 8, "casinh": 8, "catanh": 6, "cphase": 3, "cpolar": 3,
    "crect": 2, "cisnan": 0, "cisinf": 0, "cisfinite": 0,
    # exact by definition: splitting a float, integers, comparisons, logic and bits, NumPy's selections and signs
    **dict.fromkeys(("frexp", "modf", "nextafter", "remainder", "rint", "isnan", "isinf", "isfinite",
                     "greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "logical_and",
                     "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
                     "invert", "bitwise_not", "left_shift", "right_shift", "maximum", "minimum", "fmax", "fmin",
                     "square", "sign", "negative", "absolute", "abs", "conjugate", "conj"), 0),
    # NumPy's reductions (reductions.py): loops of + - * / and compares, one order on both sides; np.std's pow
    **dict.fromkeys(("sum", "prod", "mean", "var", "nansum", "nanprod", "nanmean", "min", "max", "amin", "amax",
                     "nanmin", "nanmax", "count_nonzero", "all", "any", "argmax", "argmin", "nanvar"), 0), "std": 4,
    "nanstd": 4,
}


@dataclass
class KernelFacts:
    params: list  # parameter names
    scalar_types: dict = field(default_factory=dict)  # index -> Numba type name of each scalar parameter
    read: set = field(default_factory=set)  # indices of array parameters the kernel reads
    written: set = field(default_factory=set)
    atomic: set = field(default_factory=set)  # written with cuda.atomic.*
    float_atomic: set = field(default_factory=set)  # float arrays accumulated with atomics (order unspecified)
    calls: dict = field(default_factory=dict)  # math function -> number of call sites
    contractible: bool = False  # a float a*b feeds a + or -: a GPU compiler may fuse it into an FMA
    known: bool = True  # False for a shell (the rules did not translate it): reads and calls guessed
    grid_sync: bool = False  # calls cuda.cg.this_grid().sync(), which the CUDA simulator cannot run faithfully

    @property
    def inout(self) -> set:
        return self.read & self.written

    def to_json(self) -> dict:
        return {"params": self.params, "read": sorted(self.read), "written": sorted(self.written),
                "atomic": sorted(self.atomic), "inout": sorted(self.inout),
                "scalar_types": {str(i): t for i, t in self.scalar_types.items()}, "grid_sync": self.grid_sync}

    def ulp_budget(self) -> tuple[int, str]:
        """(ULP per float output, why) that two faithful implementations may differ by on one side's libm."""
        inexact = {f: n for f, n in self.calls.items() if ULP_PER_CALL.get(f, 2)}
        if not inexact:
            return 0, "only operations that round alike on both sides (+ - * /, sqrt, casts)"
        total = sum(ULP_PER_CALL.get(f, 2) * n for f, n in inexact.items())
        parts = ", ".join(f"math.{f} x{n} ({ULP_PER_CALL.get(f, 2)} ULP each)" for f, n in sorted(inexact.items()))
        return total, f"{parts}: CUDA's documented error per call"


def kernel_facts(fn) -> KernelFacts:
    params = fn.python_params  # as example() passes them: a tuple parameter is one (and is not redrawn)
    facts = KernelFacts([p.name for p in params],
                        scalar_types={i: p.type.name for i, p in enumerate(params)
                                      if p.array is None and len(p.params) == 1 and p.params[0].item_of is None})
    index = {id(p.array): {i} for i, p in enumerate(params) if p.array is not None}
    if getattr(fn, "external_code", None) is not None or (not fn.body and fn.node is not None):
        return _shell_facts(fn, facts)
    _walk(fn.body, facts, index, 0)
    return facts


_SKIP = {"node", "type", "var", "defs", "intrinsic", "array", "decl_loc", "target"}


def _param_of(arr, index, seen=None) -> set:
    """The parameters ARR may be: its root's, or, for an array name bound on several branches (an alias), those
    of every array it may stand for."""
    if arr is None:
        return set()
    root = root_array(arr)
    seen = set() if seen is None else seen
    if id(root) in seen:
        return set()
    seen.add(id(root))
    found = set(index.get(id(root), ()))
    for source in getattr(root, "sources", ()):
        found |= _param_of(source, index, seen)
    return found


def _walk(node, facts, index, depth):
    """Record the parameters NODE reads and writes and the math it calls; `index`: id(ArrayVar) -> parameter."""
    if isinstance(node, list):
        for n in node:
            _walk(n, facts, index, depth)
        return
    if not isinstance(node, (ir.Expr, ir.Stmt)):
        return
    if isinstance(node, ir.Store):
        facts.written |= _param_of(node.target.array, index)
        _walk(node.target.indices + (node.target.sub or []), facts, index, depth)
    elif isinstance(node, ir.Load):
        facts.read |= _param_of(node.array, index)
    elif isinstance(node, ir.AddressOf):
        _walk(node.target, facts, index, depth)
    elif isinstance(node, ir.Call):
        _call(node, facts, index)
    elif isinstance(node, ir.BinOp) and node.op in ("+", "-") and _is_float(node):
        facts.contractible |= any(isinstance(x, ir.BinOp) and x.op == "*" and _is_float(x)
                                  for x in (node.left, node.right))
    elif isinstance(node, ir.DeviceCall) and node.target is not None and depth < 16:
        callee = node.target
        sub = {id(p.array): _param_of(a.array, index) for p, a in zip(callee.params, node.args)
               if p.array is not None and isinstance(a, ir.ArrayRef) and _param_of(a.array, index)}
        _walk(callee.body, facts, sub, depth + 1)
    for name, child in vars(node).items():
        if name not in _SKIP:
            _walk(child, facts, index, depth)


def _is_float(e) -> bool:
    return getattr(e.type, "is_float", False)


def _call(node, facts, index):
    key = node.intrinsic.key
    if key == "cuda.cg.this_grid.sync":
        facts.grid_sync = True
    if key.startswith(("cuda.atomic.", "cuda.random.")):
        # the target; the value (`x[i]` of atomic.add(out, i, x[i])) is only read. A draw advances the state it
        # is given (the address of states[i]) in place
        for a in node.args[:1]:
            if isinstance(a, ir.Call) and a.intrinsic.key in ("complex.real", "complex.imag") and a.args:
                a = a.args[0]  # `cuda.atomic.add(rho.real, i, v)`: the address of a part of rho[i]
            arr = a.array if isinstance(a, (ir.ArrayRef, ir.Load)) else \
                a.target.array if isinstance(a, ir.AddressOf) else None
            i = _param_of(arr, index)
            facts.read |= i
            facts.written |= i
            if key.startswith("cuda.atomic."):
                facts.atomic |= i
                if i and (root_array(arr).dtype.is_float or root_array(arr).dtype.is_complex):
                    facts.float_atomic |= i
    elif key.startswith(("math.", "np.", "cmath.")) or key in ("cuda.fma", "cuda.cbrt"):
        name = ("c" if key.startswith("cmath.") else "") + key.split(".")[-1]
        facts.calls[name] = facts.calls.get(name, 0) + 1


_MATH_CALL = re.compile(r"\b(c?)(?:math|np|numpy)\.(\w+)\s*\(")  # cmath's calls named with a c, as _call does
_ATOMIC_CALL = re.compile(r"\bcuda\.atomic\.\w+\(\s*(\w+)")


def _shell_facts(fn, facts):
    """A kernel the rules did not translate: what its source says (every written array counted as read too)."""
    import libcst as cst

    facts.known = False
    src = cst.Module([]).code_for_node(fn.node)
    python_params = fn.python_params
    for p_i, p in enumerate(python_params):
        if p.array is not None and p.array.written:
            facts.written.add(p_i)
            facts.read.add(p_i)
        elif p.array is not None:
            facts.read.add(p_i)
    for c, name in _MATH_CALL.findall(src):
        facts.calls[c + name] = facts.calls.get(c + name, 0) + 1
    for arr in _ATOMIC_CALL.findall(src):
        if arr in facts.params:
            i = facts.params.index(arr)
            facts.atomic.add(i)
            if python_params[i].array is not None and python_params[i].array.dtype.is_float:
                facts.float_atomic.add(i)
    return facts
