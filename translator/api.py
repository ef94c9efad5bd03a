"""The public Python API: numba source -> .cu text (translate_file, translate_source), and a Numba module's
kernels built and loaded as drop-in replacements (load; synchronize names a kernel that faulted)."""

from __future__ import annotations

from pathlib import Path

from .emit.render import render_program
from .frontend.module import parse_file, parse_source
from .lower.program import Options, build_program
from .runtime.dropin import load
from .runtime.launch_checks import KernelFaultError, LaunchError

__all__ = ["KernelFaultError", "LaunchError", "Options", "load", "synchronize", "translate_file", "translate_source"]


def synchronize(device=None) -> None:
    """Wait for the GPU's work (torch.cuda.synchronize); a kernel fault CUDA reports there raises KernelFaultError
    naming the last kernel numba2cuda launched."""
    from .runtime.launch import synchronize as wait  # imports torch: only when called

    wait(device)


def translate_source(source: str, path: str = "<string>", options: Options | None = None) -> str:
    info = parse_source(source, path)
    program = build_program(info, options or Options())
    return render_program(program, Path(path).name)


def translate_file(path: str | Path, options: Options | None = None) -> str:
    info = parse_file(path, (options or Options()).import_module)
    program = build_program(info, options or Options())
    return render_program(program, Path(path).name)
