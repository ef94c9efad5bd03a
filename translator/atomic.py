"""text -> file, written next to the target and renamed into place: a killed run never leaves half a file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same directory, then os.replace it."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent or Path(".")))
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:  # the same bytes on every OS
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
