"""Helpers for users' CI: `assert_equivalent("kernels/matmul.py")` fails the test with verify's report."""

from __future__ import annotations

from ..errors import UserError
from .run import verify
from .report import format_report


def assert_equivalent(path, kernel: str | None = None, seeds: int = 1, seed: int = 0, cu_text: str | None = None,
                      sizes: list | None = None, sim_max_threads: int | None = None, device: str = "auto"):
    """Check the translation of `path` against its Numba original on the module's example().

    Cases: every seed x size (the module's VERIFY_SIZES unless `sizes` is given, e.g. ["small", 67]) x
    specialisation value x input distribution, as `numba2cuda verify` runs them. Imports and runs the
    module (in a subprocess: on the GPU when device is "cuda", or "auto" and torch sees one, else in the
    CUDA simulator, the translation then on the CPU runtime). Raises AssertionError with the
    report (or the translator's error text) unless equivalent; returns the VerifyResult otherwise.
    """
    try:
        result = verify(path, kernel=kernel, seed=seed, seeds=seeds, cu_text=cu_text, sizes=sizes,
                        sim_max_threads=sim_max_threads, device=device)
    except UserError as exc:
        raise AssertionError(exc.text) from None
    if not result.ok:
        raise AssertionError(format_report(result))
    return result
