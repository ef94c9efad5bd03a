"""The import mode's child side, continued: the source of a function made by `exec()` of a string.

numba-cuda's atomics tests make their kernels from a template (`exec(fns.format(func="cuda.atomic.max"), g, ld)`),
and a function made so has no file: its code names `<string>`. Numba compiles it from its bytecode; numba2cuda
reads source, so while the module is imported each string given to `exec` is kept with the line that ran it, and a
kernel whose code names `<string>` is read from the string that defines it at its line (frontend/importmode.py
parses it as a file of its own, named after that line).
"""

from __future__ import annotations

import builtins
import os
import sys

MAX_SOURCES = 256
MAX_CHARS = 1 << 20


class ExecSources:
    """The strings `exec` ran while installed, each with (file, line) of the call."""

    def __init__(self):
        self.sources: list = []

    def install(self, path: str) -> None:
        """Keep the strings the module at PATH runs (Numba's own exec calls, and other modules', are not kept)."""
        real = builtins.exec
        sources = self.sources

        def exec_(source, globals=None, locals=None, /, *rest, **kwargs):  # noqa: A002 - exec's own names
            frame = sys._getframe(1)
            if isinstance(source, str) and len(sources) < MAX_SOURCES and len(source) <= MAX_CHARS \
                    and os.path.realpath(frame.f_code.co_filename) == path:
                sources.append((source, path, frame.f_lineno))
            if globals is None:  # exec with no namespace runs in its caller's, not in this wrapper's
                globals, locals = frame.f_globals, frame.f_locals if locals is None else locals
            return real(source, globals, locals, *rest, **kwargs)

        builtins.exec = exec_

    def find(self, code):
        """(source, file, line of the exec) of the string whose compiled code holds CODE (a template run four
        times makes four functions of one name at one line, told apart by what they call), or None."""
        for source, path, at in reversed(self.sources):
            if _defines(source, code):
                return source, path, at
        return None


def _defines(source: str, code) -> bool:
    try:
        compiled = compile(source, "<string>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    stack = [compiled]
    while stack:
        c = stack.pop()
        if c.co_name == code.co_name and c.co_firstlineno == code.co_firstlineno and c.co_code == code.co_code \
                and c.co_names == code.co_names and c.co_consts == code.co_consts:
            return True
        stack.extend(k for k in c.co_consts if hasattr(k, "co_code"))
    return False
