"""environment and [tool.numba2cuda] -> warnings for names numba2cuda does not know, with the closest one it does.

A misspelt setting is otherwise silently ignored (NUMBA2CUDA_CAHCE builds into ~/.cache after all), so every
command warns about them once, on stderr, and `numba2cuda doctor` lists them. The names known are listed
here in one place: a stage that reads a new variable or key adds it to ENV_VARS or PYPROJECT_KEYS.
"""

from __future__ import annotations

import difflib
import os
import sys
from pathlib import Path

from .llm.config import PYPROJECT_KEYS as LLM_KEYS
from .llm.config import SECRET_KEYS, find_pyproject

#: NUMBA2CUDA_* environment variables numba2cuda reads, and what for
ENV_VARS = {
    "NUMBA2CUDA_CACHE": "the cache folder (default ~/.cache/numba2cuda)",
    "NUMBA2CUDA_MODEL": "the LLM backend's model",
    "NUMBA2CUDA_LLM_NVCC": "0: the LLM gate skips its nvcc -c check",
    "NUMBA2CUDA_CONFINE": "1 (set by the LLM gate in its child): confine a process before it loads a model's code",
    "NUMBA2CUDA_PROGRESS": "0: no progress bars (as --quiet)",
}

#: NUMBA2CUDA_* names that are not environment variables, and where they belong instead
NOT_ENV_VARS = {"NUMBA2CUDA_TYPES": "a dict in the kernel module (NUMBA2CUDA_TYPES = {...}), not an environment "
                                    "variable"}

#: [tool.numba2cuda] keys and what reads them
PYPROJECT_KEYS = {**{key: "the LLM backend" for key in LLM_KEYS},
                  "verify": "the pytest plugin: the kernel modules, folders or globs `pytest --numba2cuda` verifies",
                  "import_module": "translate, build, package and verify: true (or \"gpu\") imports the module to "
                                   "read its values, as --import-module does"}

_WARNED: set[str] = set()


def _closest(name: str, known) -> str:
    match = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {match[0]}?)" if match else f" (known: {', '.join(sorted(known))})"


def unknown_environment(environ=None) -> list[str]:
    """One warning per NUMBA2CUDA_* variable of ENVIRON (default os.environ) that numba2cuda does not read."""
    environ = os.environ if environ is None else environ
    out = []
    for name in sorted(environ):
        if not name.startswith("NUMBA2CUDA_") or name in ENV_VARS:
            continue
        if name in NOT_ENV_VARS:
            out.append(f"environment variable {name} is ignored: {NOT_ENV_VARS[name]}")
        else:
            out.append(f"environment variable {name} is not a numba2cuda setting{_closest(name, ENV_VARS)}")
    return out


def unknown_pyproject_keys(start: Path) -> list[str]:
    """One warning per [tool.numba2cuda] key of the pyproject.toml nearest to START that nothing reads."""
    try:
        import tomllib  # Python 3.11+; on 3.10 there is nothing to check with
    except ImportError:
        return []
    start = Path(start)
    path = find_pyproject(start if start.is_dir() else start.parent)
    if path is None:
        return []
    try:
        with open(path, "rb") as f:
            table = tomllib.load(f).get("tool", {}).get("numba2cuda", {})
    except (OSError, tomllib.TOMLDecodeError):
        return []  # the reader of the setting says what is wrong with the file
    if not isinstance(table, dict):
        return []
    return [f"{path}: [tool.numba2cuda] {key} is not a numba2cuda setting{_closest(key, PYPROJECT_KEYS)}"
            for key in table if key not in PYPROJECT_KEYS and key.lower() not in SECRET_KEYS]


def warn_unknown_settings(paths=(), stream=None) -> list[str]:
    """Print (once per process) a warning per unknown variable and per unknown key of the pyproject.toml
    nearest to each of PATHS (the command's inputs; the current directory when none)."""
    stream = stream if stream is not None else sys.stderr
    found = unknown_environment()
    for start in {Path(p).resolve().parent if Path(p).is_file() else Path(p).resolve()
                  for p in (paths or [Path.cwd()]) if p != "-" and Path(p).exists()}:
        found += unknown_pyproject_keys(start)
    new = [w for w in found if w not in _WARNED]
    for warning in new:
        _WARNED.add(warning)
        print(f"numba2cuda: warning: {warning}", file=stream)
    return new
