"""Program -> text: the CUDA C printer (cexpr.py for expressions, codegen.py for statements, one visit_ per
node), the .cu assembled from Jinja templates (render.py), the torch binding .cpp (bindings.py), and the
typed-IR dump of `translate --emit ir` (irdump.py)."""

from .bindings import render_bindings
from .render import render_program

__all__ = ["render_bindings", "render_program"]
