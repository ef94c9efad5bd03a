"""text -> file, written next to the target and renamed into place: a killed run never leaves half a file.

The file ends up as an editor would leave it: a symlink stays a symlink (its target gets the new text), an
existing file keeps its permissions, and a new one gets what the umask gives any new file (mkstemp's 0600
would hide a translation from the rest of a team)."""

from __future__ import annotations

import os
import stat
import tempfile
import threading
from pathlib import Path

_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process's umask, read without changing it where Linux says it (/proc), else set and restored."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def write_atomically(path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same directory, then os.replace it; through a
    symlink, at the file it points to."""
    target = Path(os.path.realpath(path))
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~current_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=str(target.parent))
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:  # the same bytes on every OS
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
