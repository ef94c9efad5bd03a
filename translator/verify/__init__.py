"""numba module + translation -> equivalence verdict: the Numba original run by a subprocess (reference.py), the
translation on the CPU runtime or the GPU (runners.py), compared per case (check.py, compare.py), reported
as a table, JSON and JUnit (report.py); oneoff.py reads `--args` launches, cli.py is `numba2cuda verify`,
testing.py the pytest API."""

from .result import VerifyResult
from .run import verify
from .report import format_report, junit_xml
from .testing import assert_equivalent

__all__ = ["VerifyResult", "assert_equivalent", "format_report", "junit_xml", "verify"]
