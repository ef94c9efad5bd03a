"""numba source -> .cu text: the whole translation pipeline in two calls."""

from __future__ import annotations

from pathlib import Path

from .frontend import parse_file, parse_source
from .lower import Options, build_program
from .render import render_program


def translate_source(source: str, path: str = "<string>", options: Options | None = None) -> str:
    info = parse_source(source, path)
    program = build_program(info, options or Options())
    return render_program(program, Path(path).name)


def translate_file(path: str | Path, options: Options | None = None) -> str:
    info = parse_file(path)
    program = build_program(info, options or Options())
    return render_program(program, Path(path).name)
