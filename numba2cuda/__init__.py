"""numba2cuda: `numba2cuda.load("kernels/matmul.py")` gives drop-in CUDA C versions of a module's Numba kernels."""

from translator import __version__
from translator.api import load, translate_file, translate_source

__all__ = ["__version__", "load", "translate_file", "translate_source"]
