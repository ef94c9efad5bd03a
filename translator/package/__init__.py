"""numba module -> a pip-installable project (setup.py with torch's CUDAExtension, the same .cu and binding as
the drop-in, a runtime that imports neither numba2cuda nor Numba) and, on request, its wheel
(project.py); cli.py is `numba2cuda package`."""

from .project import PackageResult, package

__all__ = ["PackageResult", "package"]
