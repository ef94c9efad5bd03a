"""The numba2cuda version: one place, below every stage (the binding and package headers record it)."""

__version__ = "0.1.0"
