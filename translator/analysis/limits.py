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
    total = 0
    # the kernel and every device function it reaches: their __shared__ arrays count for its blocks
    for fn in [kernel, *reachable_functions([kernel])]:
        for s in walk_statements(fn.body):
            if isinstance(s, ir.ArrayDecl) and s.array.kind == "shared":
                count = 1
                for d in s.array.shape:
                    count *= int(d.value) if isinstance(d, ir.Const) else 0
                total += count * s.array.dtype.bits // 8
    return total


def shared_problem(kernel: ir.Function, dynamic_bytes: int, limit: int, where: str) -> str | None:
    """A message when static + dynamic shared memory exceeds `limit`, else None."""
    static = static_shared_bytes(kernel)
    if static + dynamic_bytes <= limit:
        return None
    return (f"the launch asks for {static + dynamic_bytes} bytes of shared memory per block ({static} static + "
            f"{dynamic_bytes} dynamic), more than the {limit} bytes {where}; the original cannot launch it "
            "either: use a smaller tile or block")
