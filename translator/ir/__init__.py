"""KernelIR -> what every stage builds, reads and rewrites: the nodes (nodes.py), Numba's types and typing rules
(typesys.py), simple facts about expressions (facts.py), and the intrinsics table keyed by Numba spelling (intrinsics.py),
which the frontend consults to recognise a call and the lowering to spell it in C.

At the bottom of the pipeline: it imports no other stage."""

from .nodes import Function
from .typesys import TypeStringError, parse_type, parse_types_option

__all__ = ["Function", "TypeStringError", "parse_type", "parse_types_option"]
