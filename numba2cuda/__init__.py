"""numba2cuda: `numba2cuda.load("kernels/matmul.py")` gives drop-in CUDA C versions of a module's Numba kernels."""

from translator import __version__
from translator.api import KernelFaultError, LaunchError, load, synchronize, translate_file, translate_source

__all__ = ["KernelFaultError", "LaunchError", "__version__", "load", "synchronize", "translate_file",
           "translate_source"]
