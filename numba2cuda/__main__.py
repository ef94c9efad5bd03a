"""`python -m numba2cuda ...`: the numba2cuda command, for environments where its script is not on PATH."""

import sys

from translator.cli import main

sys.exit(main())
