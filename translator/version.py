"""The numba2cuda version: one place, below every stage (the binding and package headers record it), and the
versions of what it works with, read without importing them (importing torch alone takes seconds)."""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import platform
from pathlib import Path

__version__ = "0.1.0"


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def torch_cuda_version() -> str | None:
    """The CUDA torch was built with, read from torch/version.py's `cuda = '13.0'` without importing torch."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    try:
        tree = ast.parse((Path(list(spec.submodule_search_locations)[0]) / "version.py").read_text())
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and target.id == "cuda" and isinstance(node.value, ast.Constant):
            return node.value.value
    return None


def versions_text(nvcc_release: str | None = None) -> str:
    """--version: numba2cuda, Python, and torch (its CUDA), numba, numba-cuda and the CUDA toolkit where installed."""
    lines = [f"numba2cuda {__version__} (Python {platform.python_version()})"]
    torch = _version("torch")
    if torch:
        cuda = torch_cuda_version()
        lines.append(f"torch {torch} ({'CUDA ' + cuda if cuda else 'CPU only'})")
    else:
        lines.append("torch not installed")
    numba, numba_cuda = _version("numba"), _version("numba-cuda")
    lines.append(f"numba {numba or 'not installed'}, numba-cuda {numba_cuda or 'not installed'}")
    lines.append(f"CUDA toolkit {nvcc_release} (nvcc)" if nvcc_release else "CUDA toolkit: no nvcc found")
    return "\n".join(lines)
