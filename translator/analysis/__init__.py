"""untyped KernelIR -> typed KernelIR and facts about it: reaching definitions and webs (dataflow.py), Numba's
typing of every expression and variable (typer.py), lower bounds of integers (bounds.py), tile-width
parameters to specialise (specialize.py), the call graph (calls.py) and the shared memory a launch asks for
(limits.py)."""

from .calls import reachable_functions
from .typer import Typer

__all__ = ["Typer", "reachable_functions"]
