"""The pytest API, where users' CI imports it: `from translator.testing import assert_equivalent`."""

from .verify.testing import assert_equivalent

__all__ = ["assert_equivalent"]
