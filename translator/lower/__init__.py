"""ModuleInfo -> Program: every requested kernel and the device functions it calls, lowered (frontend),
typed (analysis) and made C-ready: casts only where C's conversions differ from Numba's (legalize.py) and
where each C variable is declared (declarations.py). options.py holds the options that steer it;
shells.py makes a Program for a .cu written elsewhere (the model's, or a hand-edited one)."""

from .options import options_from
from .program import Options, Program, build_program

__all__ = ["Options", "Program", "build_program", "options_from"]
