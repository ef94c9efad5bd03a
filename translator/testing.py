"""Helpers for users' CI: `assert_equivalent("kernels/matmul.py")` fails the test with verify's report."""

from __future__ import annotations

from .errors import UserError
from .verify import format_report, verify


def assert_equivalent(path, kernel: str | None = None, seeds: int = 1, seed: int = 0, cu_text: str | None = None,
                      sizes: list | None = None, sim_max_threads: int | None = None):
    """Check the translation of `path` against its Numba original on the module's example().

    Cases: every seed x size (the module's VERIFY_SIZES unless `sizes` is given, e.g. ["small", 67]) x
    specialisation value, as `numba2cuda verify` runs them. Imports and runs the module (in a
    CUDA-simulator subprocess). Raises AssertionError with the
    report (or the translator's error text) unless equivalent; returns the VerifyResult otherwise.
    """
    try:
        result = verify(path, kernel=kernel, seed=seed, seeds=seeds, cu_text=cu_text, sizes=sizes,
                        sim_max_threads=sim_max_threads)
    except UserError as exc:
        raise AssertionError(exc.text) from None
    if not result.ok:
        raise AssertionError(format_report(result))
    return result
