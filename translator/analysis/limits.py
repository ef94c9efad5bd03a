"""KernelIR -> shared memory a launch asks for (static __shared__ + dynamic), checked against a device's limit."""

from __future__ import annotations

from ..ir import nodes as ir
from .dataflow import walk_statements
from .calls import reachable_functions

# What a launch gets without opting in (cudaFuncAttributeMaxDynamicSharedMemorySize), on every GPU
# since Kepler; Numba never opts in, so the original cannot run above it on any device.
DEFAULT_LIMIT = 48 * 1024


def static_shared_bytes(kernel: ir.Function) -> int:
    """Bytes of the constant-shaped __shared__ arrays a block of this kernel holds."""
    return static_shared_terms(kernel)[0]


def static_shared_terms(kernel: ir.Function) -> tuple[int, list]:
    """(bytes of the constant-shaped __shared__ arrays a block of this kernel holds, [(the template parameters
    an array's shape names, its bytes per unit of their product)] for the arrays a kernel made per call shapes
    by that call's values)."""
    total, terms = 0, []
    # the kernel and every device function it reaches: their __shared__ arrays count for its blocks
    for fn in [kernel, *reachable_functions([kernel])]:
        for s in walk_statements(fn.body):
            if isinstance(s, ir.ArrayDecl) and s.array.kind == "shared":
                count, names = s.array.dtype.bits // 8, []
                for d in s.array.shape:
                    if isinstance(d, ir.Const):
                        count *= int(d.value)
                    elif getattr(d, "per_call", False):
                        names.append(d.text)
                    else:
                        count = 0
                if names:
                    terms.append((names, count))
                else:
                    total += count
    return total, terms


def shared_problem(kernel: ir.Function, dynamic_bytes: int, limit: int, where: str) -> str | None:
    """A message when static + dynamic shared memory exceeds `limit`, else None."""
    static = static_shared_bytes(kernel)
    if static + dynamic_bytes <= limit:
        return None
    return (f"the launch asks for {static + dynamic_bytes} bytes of shared memory per block ({static} static + "
            f"{dynamic_bytes} dynamic), more than the {limit} bytes {where}; the original cannot launch it "
            "either: use a smaller tile or block")
