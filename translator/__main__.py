"""`python -m translator` runs the numba2cuda command (as `python -m numba2cuda` does)."""

import sys

from .cli import main

sys.exit(main())
