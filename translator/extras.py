"""installed packages -> which of numba2cuda's extras are usable, and the one error a command gives without its own.

`pip install numba2cuda` gives `translate` (libcst, jinja2, numpy, filelock); each other command needs an
extra (pyproject.toml's [project.optional-dependencies]). A command checks its extra before doing anything
(`require`), so a missing package is a usage error that names the extra to install (exit 2), never an
ImportError from deep inside. Finding a package here never imports it: importing torch alone takes seconds.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util

from .errors import UserError

#: extra -> [(import name, distribution name)] a command of that extra cannot run without. Optional helpers
#: (ninja: the build runs the compilers itself without it; rich: plain output; matplotlib: only --plot) are
#: installed by the extras but not required.
EXTRAS = {
    "verify": [("numba", "numba"), ("numba_cuda", "numba-cuda")],
    "build": [("torch", "torch")],
    "llm": [("openai", "openai")],
    "bench": [("torch", "torch"), ("numba", "numba"), ("numba_cuda", "numba-cuda")],
}

#: optional packages each extra also installs: (import name, distribution, what it adds)
OPTIONAL = {
    "verify": [("rich", "rich", "progress bars")],
    "build": [("ninja", "ninja", "the compilers driven by ninja (else run directly)"),
              ("rich", "rich", "progress bars")],
    "bench": [("rich", "rich", "the table and progress bars"), ("matplotlib", "matplotlib", "--plot")],
}


def installed(module: str) -> bool:
    """Whether `import MODULE` would find it (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a module set to None in sys.modules
        return False


def version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def missing(extra: str) -> list[str]:
    """The distributions of EXTRA that are not installed."""
    return [dist for module, dist in EXTRAS[extra] if not installed(module)]


def require(extra: str, command: str, why: str = "") -> None:
    """Raise the usage error of COMMAND run without EXTRA's packages; return quietly when they are there."""
    absent = missing(extra)
    if absent:
        reason = f" ({why})" if why else ""
        raise UserError(f"numba2cuda {command}: error: needs {', '.join(absent)}, which "
                        f"{'is' if len(absent) == 1 else 'are'} not installed{reason}\n"
                        f"    hint: pip install 'numba2cuda[{extra}]'  (from a clone: pip install -e '.[{extra}]'); "
                        "`numba2cuda doctor` lists what this machine has")
