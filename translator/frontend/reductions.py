"""NumPy's reductions of a whole array (`np.sum(a)`, `a.mean()`, `np.nansum(row)`) and Python's sum() -> calls of
n2c's array_reduce helpers, with the result types numba-cuda's typing gives (mixed into the call lowerer).

numba-cuda computes each as a loop over np.nditer(a), in C order; the helpers do the same over the array's
elements (a 1-D view with its step, or a C-contiguous array as its flat elements), so sums round as Numba's do."""

from __future__ import annotations

import os

import libcst as cst

from ..errors import Unsupported
from ..ir import intrinsics
from ..ir import nodes as ir
from ..ir import typesys as T
from .expr import TupleValue, const_expr
from .scan import find_nodes

# name -> (helper, its template argument and result: "acc" the accumulator type numba-cuda sums in, "mean" the
# accumulator of a mean (float64 for integers and bools), "same" the element type, or a fixed type)
REDUCTIONS = {
    "sum": ("array_sum", "acc"), "prod": ("array_prod", "acc"), "nansum": ("array_nansum", "nanacc"),
    "nanprod": ("array_nanprod", "nanacc"), "mean": ("array_mean", "mean"), "var": ("array_var", "mean"),
    "std": ("array_var", "mean"), "nanmean": ("array_nanmean", T.FLOAT64), "nanvar": ("array_nanvar", T.FLOAT64),
    "nanstd": ("array_nanvar", T.FLOAT64),
    "min": ("array_npmin", "same"), "amin": ("array_npmin", "same"), "max": ("array_npmax", "same"),
    "amax": ("array_npmax", "same"), "nanmin": ("array_nanmin", "same"), "nanmax": ("array_nanmax", "same"),
    "argmax": ("array_argmax", T.INT64), "argmin": ("array_argmin", T.INT64),
    "count_nonzero": ("array_count_nonzero", T.INT64), "all": ("array_all", T.BOOL), "any": ("array_any", T.BOOL),
}
# numba-cuda 0.30.4 compiles these only with its runtime (NRT) on: their lowering makes a 0-d array (next(it).take(0))
# and returns it, which without NRT fails ("Only accept returning of array passed into the function as argument";
# an H100, 2026-12-05); its reduction tests turn NRT on
NEEDS_RUNTIME = {"min", "amin", "max", "amax", "nanmin", "nanmax"}
# the array methods numba-cuda gives the same reductions (`a.sum()`); np.nan* and count_nonzero have none
METHODS = {"sum", "prod", "mean", "var", "std", "min", "max", "all", "any", "argmax", "argmin"}


def accumulator(dtype: T.Scalar, rule):
    """The type numba-cuda sums DTYPE's elements in, for RULE (REDUCTIONS)."""
    if isinstance(rule, T.Scalar):
        return rule
    if rule == "same":
        return dtype
    if rule == "mean":
        return T.FLOAT64 if dtype.kind in "iub" else dtype
    if dtype.kind == "u":
        return T.UINT64
    if dtype.kind == "i" or (dtype.kind == "b" and rule == "acc"):  # np.nansum of bools sums them as ints too
        return T.INT64
    return T.INT64 if dtype.kind == "b" else dtype


def runtime_on(module: cst.Module) -> bool:
    """Whether numba-cuda's runtime (NRT) is on where MODULE's kernels compile: the module sets
    `config.CUDA_ENABLE_NRT = True` (numba-cuda's reduction tests, in setUp) or overrides it so
    (override_config("CUDA_ENABLE_NRT", True)), or sets NUMBA_CUDA_ENABLE_NRT, or this process's environment has
    NUMBA_CUDA_ENABLE_NRT=1, which Numba reads too."""
    if os.environ.get("NUMBA_CUDA_ENABLE_NRT", "0").strip() not in ("", "0"):
        return True
    return bool(find_nodes(module, _turns_runtime_on, first=True))  # a reduction's call is rare: read each time


def _turns_runtime_on(node) -> bool:
    if isinstance(node, cst.Assign) and _true(node.value):
        return any(isinstance(t.target, cst.Attribute) and t.target.attr.value == "CUDA_ENABLE_NRT"
                   or isinstance(t.target, cst.Subscript) and _names_setting(t.target) for t in node.targets)
    if isinstance(node, cst.Call):  # override_config("CUDA_ENABLE_NRT", True), os.environ.setdefault(...)
        return any(_names_setting(a.value) for a in node.args) and any(_true(a.value) for a in node.args)
    return False


def _names_setting(node) -> bool:
    return bool(find_nodes(node, lambda n: isinstance(n, cst.SimpleString) and n.evaluated_value in (
        "CUDA_ENABLE_NRT", "NUMBA_CUDA_ENABLE_NRT"), first=True))


def _true(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "True" or \
        isinstance(node, cst.SimpleString) and node.evaluated_value == "1" or \
        isinstance(node, cst.Integer) and node.value == "1"


class ReductionLowerer:
    """Needs, from the class it is mixed into: value(), use_helper(), shape_of()."""

    def reduction(self, node, name, args, kwargs):
        if len(args) != 1 or kwargs:
            raise Unsupported(node, f"np.{name}()", "numba2cuda reduces a whole array: one argument, no axis= or "
                              "dtype=", "loop over the axis and reduce each row")
        arr = self.value(args[0])
        if not isinstance(arr, ir.ArrayVar) or arr.pointer:
            raise Unsupported(args[0], f"np.{name}() of this value", "numba2cuda reduces arrays and their views",
                              "pass an array")
        if arr.dtype.kind not in "iubf" or arr.dtype == T.FLOAT16:
            raise Unsupported(args[0], f"np.{name}() of a {arr.dtype} array", "numba2cuda reduces arrays of "
                              "integers, bools, float32 and float64", "loop over the elements")
        flat = self.flat_elements(arr, node, name)
        helper, rule = REDUCTIONS[name]
        if name in NEEDS_RUNTIME and not runtime_on(self.info.module):
            method = isinstance(node.func, cst.Attribute) and args and node.func.value is args[0]
            builtin = "min" if "min" in name else "max"
            raise Unsupported(node, f"{'a.' if method else 'np.'}{name}() of an array", "numba-cuda cannot compile "
                              "it in a kernel without its runtime (NRT), which this module does not turn on (its "
                              "lowering returns a new 0-d array)", f"use Python's {builtin}(a) of a 1-D array or "
                              "row, which numba-cuda compiles, or a loop; or turn NRT on as Numba's own tests do "
                              "(config.CUDA_ENABLE_NRT = True, or NUMBA_CUDA_ENABLE_NRT=1)")
        template = accumulator(arr.dtype, rule)
        result = T.FLOAT64 if rule == "mean" else template
        spelt = f"n2c::{helper}<{T.c_name(template)}>" if rule in ("acc", "nanacc", "mean") else f"n2c::{helper}"
        call = self.reduce_call(f"np.{name}", spelt, result, flat, args[0])
        if name in ("std", "nanstd"):  # numba-cuda's `a.var() ** 0.5`, `np.nanvar(a) ** 0.5`
            return ir.BinOp("**", call, const_expr(0.5, node))
        return call

    def call_sum(self, node, args, kwargs):
        """Python's sum() (numba-cuda's ol_sum): `acc = start; for x in it: acc = acc + x`, so the accumulator is
        start's type unified with start + x (int64 0 + float32 elements add in float64, unlike np.sum)."""
        start = kwargs.pop("start", args[1] if len(args) == 2 else None)
        if not 1 <= len(args) <= 2 or kwargs:
            raise Unsupported(node, "sum()", "takes an iterable and a start")
        if isinstance(args[0], cst.GeneratorExp):
            raise Unsupported(args[0], "sum() of a generator expression", "numba-cuda sums an array, a tuple or a "
                              "range, not a generator", "sum the elements in a loop: s = 0.0; for j in ...: s += ...")
        items = self.value(args[0])
        first = self.expr(start) if start is not None else const_expr(0, node)
        if isinstance(items, TupleValue) and all(isinstance(v, ir.Expr) and not isinstance(v, ir.ArrayVar)
                                                 for v in items.items):
            acc = first
            for v in items.items:
                acc = ir.BinOp("+", acc, v)
            return acc
        if not isinstance(items, ir.ArrayVar) or items.pointer or items.dtype.kind not in "iubf" or \
                items.dtype == T.FLOAT16:
            raise Unsupported(args[0], "sum() of this value", "numba2cuda sums a tuple of numbers or an array of "
                              "integers, bools or floats", "sum the elements in a loop")
        if not isinstance(first, ir.Const) or first.value != 0 or isinstance(first.value, float):
            raise Unsupported(start, "sum() start", "numba2cuda sums an array from 0", "add the start afterwards")
        acc = T.arith_result(T.INT64, items.dtype)  # int64 0 + an element, the type the loop unifies to
        return self.reduce_call("sum", f"n2c::array_sum<{T.c_name(acc)}>", acc,
                                self.flat_elements(items, node, "sum"), args[0])

    def reduce_call(self, key: str, spelt: str, result: T.Scalar, flat: ir.ArrayVar, node) -> ir.Call:
        """The call of n2c's array_reduce helper SPELT over FLAT's elements, typed RESULT."""
        self.use_helper("array_reduce")
        entry = intrinsics.Intrinsic(key, spelt, lambda ts: result, (1, 1), pointers={0: flat.dtype})
        ref = ir.ArrayRef(flat)
        ref.node = node
        return ir.Call(entry, [ref])

    def flat_elements(self, arr: ir.ArrayVar, node, name) -> ir.ArrayVar:
        """ARR's elements in C order as a 1-D array: itself, or a C-contiguous array's flat view."""
        if arr.ndim == 1:
            return arr
        if arr.fortran or arr.pitch is not None or arr.step is not None:
            raise Unsupported(node, f"np.{name}() of a {arr.ndim}-D strided or column-major array", "numba2cuda "
                              "reduces 1-D arrays and C-contiguous ones", f"reduce each row: np.{name}(a[i])")
        size = const_expr(1, node)  # a 0-d array: its one element
        for d in range(arr.ndim):
            size = self.shape_of(arr, d) if d == 0 else ir.BinOp("*", size, self.shape_of(arr, d))
        flat = ir.ArrayVar("", arr.dtype, [size], "view", base=arr, offset=None)
        return flat
