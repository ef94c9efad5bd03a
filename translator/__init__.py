"""numba2cuda: Numba CUDA kernels -> readable, specialised CUDA C."""

__version__ = "0.1.0"

from .api import translate_file, translate_source  # noqa: E402

__all__ = ["__version__", "translate_file", "translate_source"]
