"""cuda.ldcg(a, i), cuda.stcs(a, i, v) and the other cache-hinted loads and stores -> CUDA's __ldcg/__stcs on
the element's address.

numba-cuda (cache_hints.py) indexes the array as any array (a tuple for N-D, negative indices from the end) and
takes integer and float elements of 8 to 64 bits; the C intrinsics are CUDA's own, one per PTX instruction."""

from __future__ import annotations

from ..errors import Unsupported
from ..ir import intrinsics
from ..ir import nodes as ir
from ..ir import typesys as T
from ..ir.facts import mark_written, root_array
from .expr import TupleValue

LOADS = ("ldca", "ldcg", "ldcs", "ldlu", "ldcv")
STORES = ("stcg", "stcs", "stwb", "stwt")


class CacheHintLowerer:
    """Needs, from the class it is mixed into: value(), expr(), index_array(), info."""

    def cache_hinted(self, node, name: str, args, kwargs):
        store = name in STORES
        want = 3 if store else 2
        if kwargs or len(args) != want:
            raise Unsupported(node, f"cuda.{name}()", f"takes {want} positional arguments: (array, index"
                              + (", value)" if store else ")"))
        arr = self.value(args[0])
        if not isinstance(arr, ir.ArrayVar) or arr.pointer:
            raise Unsupported(args[0], f"cuda.{name}()", "the first argument must be an array")
        if not (arr.dtype.is_int or arr.dtype.is_float) or arr.dtype.bits not in (8, 16, 32, 64):
            raise Unsupported(node, f"cuda.{name}() on {arr.dtype}", "numba-cuda takes arrays of integers and floats "
                              "of 8 to 64 bits (NumbaTypeError otherwise)")
        index = self.value(args[1])
        indices = index.items if isinstance(index, TupleValue) else [index]
        target = self.index_array(arr, indices, node) if len(indices) == arr.ndim else None
        if not isinstance(target, ir.Load):
            raise Unsupported(args[1], f"cuda.{name}() index", f"'{arr.name or self.info.code(args[0])}' needs "
                              f"{arr.ndim} indices (numba-cuda: one per dimension)")
        if root_array(arr).kind in ("shared", "local", "dynamic", "const"):
            raise Unsupported(args[0], f"cuda.{name}() on a {root_array(arr).kind} array", "the hint is for global "
                              "memory (ld.global/st.global)", "index the array directly")
        target.node = target.node or args[1]
        dtype = arr.dtype
        if store:
            mark_written(target.array)
            entry = intrinsics.Intrinsic(f"cuda.{name}", f"__{name}", lambda ts: T.VOID, (2, 2),
                                         arg_types=lambda ts: [None, dtype])
            return ir.Call(entry, [ir.AddressOf(target), self.expr(args[2])])
        entry = intrinsics.Intrinsic(f"cuda.{name}", f"__{name}", lambda ts: dtype, (1, 1), arg_types=lambda ts: [None])
        return ir.Call(entry, [ir.AddressOf(target)])


def _bind(name):
    return lambda self, node, args, kwargs: self.cache_hinted(node, name, args, kwargs)


for _name in LOADS + STORES:
    setattr(CacheHintLowerer, f"call_cuda_{_name}", _bind(_name))

__all__ = ["CacheHintLowerer", "LOADS", "STORES"]
