"""import spellings -> canonical Numba names: `nb.cuda.syncthreads` and `syncthreads` both become "cuda.syncthreads"."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..ir import typesys as T

if TYPE_CHECKING:
    from .info import ModuleInfo


def dotted(node) -> str | None:
    """`numba.cuda.jit` -> "numba.cuda.jit"; None for anything that is not a plain dotted name."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


_CANONICAL_PREFIXES = [("numba.cuda.", "cuda."), ("numpy.", "np."), ("math.", "math."), ("numba.", "numba."),
                      ("builtins.", "")]  # a test passes `pow` or `abs` as a value: the builtin it names


def canonical(qualified: str) -> str:
    """Qualified import path -> the spelling the intrinsic table uses ("numba.cuda.syncthreads" -> "cuda.syncthreads")."""
    if qualified == "numba.cuda":
        return "cuda"
    if qualified == "numpy":
        return "np"
    for prefix, short in _CANONICAL_PREFIXES:
        if qualified.startswith(prefix):
            return short + qualified[len(prefix):]
    return qualified


#: modules whose names numba2cuda knows (the intrinsics table, constants); any other is a user's or a project's,
#: which only running it tells
KNOWN_MODULES = ("cuda", "np", "numpy", "math", "cmath", "numba", "operator", "builtins", "scipy")


def from_unread_module(canon: str) -> str | None:
    """The module CANON (`.config.THRESHOLD`, `nemo.utils.log_sum_exp`) comes from, when numba2cuda cannot read
    it, else None."""
    module = canon.rpartition(".")[0]
    return module if module and not module.startswith(KNOWN_MODULES) else None


def qualified_name(info: ModuleInfo, node) -> str | None:
    """The import path an expression names through the module's imports (`atomic.add` after
    `from numba.cuda import atomic`: numba.cuda.atomic.add), or None."""
    name = dotted(node)
    if name is None:
        return None
    head, _, rest = name.partition(".")
    if head not in info.aliases:
        return None
    return info.aliases[head] + ("." + rest if rest else "")


def resolve(info: ModuleInfo, node) -> str | None:
    """The canonical name an expression refers to through the module's imports, or None."""
    qualified = qualified_name(info, node)
    return None if qualified is None else canonical(qualified)


#: where Numba and NumPy spell their scalar types (longest first: `numba.core.types.` before `numba.`)
SCALAR_PREFIXES = ("numba.core.types.", "cuda.core.types.", "numba.types.", "cuda.types.", "np.", "numba.", "cuda.",
                   "types.", "cupy.")  # cupy.float32 is numpy.float32


# numba.cuda.bf16.bfloat16, and the binding it re-exports
BFLOAT16_NAMES = ("cuda.bf16.bfloat16", "cuda._internal.cuda_bf16.nv_bfloat16", "cuda.types.bfloat16")
# numba-cuda's FP8 types, whose calls are cuda_fp8.h's constructors
FP8_NAMES = {f"cuda._internal.cuda_fp8.{t.name}": t for t in T.FP8}


def scalar_type_of_name(canon: str | None) -> T.Scalar | None:
    """`np.float32`, `numba.float32`, `cuda.float32`, `numba.types.int32`, `numba.cuda.types.int32` -> the scalar type."""
    if not canon:
        return None
    if canon in BFLOAT16_NAMES:
        return T.BFLOAT16
    if canon in FP8_NAMES:
        return FP8_NAMES[canon]
    for prefix in SCALAR_PREFIXES:
        if canon.startswith(prefix):
            return T.scalar_by_name(canon[len(prefix):])
    return None
