"""long-running work -> a progress bar on stderr: what runs, done/total, elapsed time.

One helper for every command (builds, verify's cases, bench's variants, package --wheel, batches), so they
look alike and obey one switch:

    with progress.bar("verify matmul.py", total=len(cases)) as b:
        for case in cases:
            ...
            b.advance(note=f"{case.kernel} size {case.size}")

The bar is drawn only when stderr is a terminal and nothing turned it off (`set_quiet(True)`, which every
command's --quiet calls, or NUMBA2CUDA_PROGRESS=0); otherwise `bar()` yields an object whose methods do
nothing, so callers never test for it. Machine output on stdout (`-o -`, `--json -`) is never touched: the
bar writes to stderr, and stdout is routed above the bar only when stdout is itself a terminal.

rich draws it when installed (an optional dependency: the translate path never imports it); without rich a
one-line counter with the elapsed seconds stands in. Bars nest: a build started under verify's bar becomes a
second line of the same display (rich allows one live display per process).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time

_STATE = {"quiet": False}
_LOCK = threading.RLock()
_LIVE = {"progress": None, "depth": 0}  # the one rich Progress shown now, and how many bars use it


def set_quiet(quiet: bool = True) -> None:
    """--quiet: no progress bars for the rest of this process (messages and results are unaffected)."""
    _STATE["quiet"] = bool(quiet)


def is_quiet() -> bool:
    return _STATE["quiet"]


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed, or a stream without isatty
        return False


def enabled(stream=None) -> bool:
    """Whether a bar would be drawn on STREAM (default stderr): a terminal, not quiet, not switched off."""
    if _STATE["quiet"] or os.environ.get("NUMBA2CUDA_PROGRESS", "").strip().lower() in ("0", "off", "no", "false"):
        return False
    return _isatty(stream if stream is not None else sys.stderr)


class Bar:
    """The handle `bar()` yields. A disabled bar (not a terminal, --quiet) accepts the same calls and draws
    nothing."""

    def __init__(self, description: str, total: int | None):
        self.description = description
        self.total = total
        self.completed = 0
        self.started = time.monotonic()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def advance(self, n: int = 1, *, note: str | None = None) -> None:
        """N more items done; NOTE (e.g. the item just finished) is shown after the description."""
        self.update(completed=self.completed + n, note=note)

    def update(self, *, completed: int | None = None, total: int | None = None, note: str | None = None) -> None:
        if completed is not None:
            self.completed = completed
        if total is not None:
            self.total = total
        self._draw(note)

    def print(self, text: str) -> None:
        """A line of output on stderr above the bar (a log line that must not tear the bar apart)."""
        print(text, file=sys.stderr, flush=True)

    def _draw(self, note: str | None) -> None:  # a disabled bar draws nothing
        pass

    def _close(self) -> None:
        pass


class _RichBar(Bar):
    def __init__(self, description, total, progress):
        super().__init__(description, total)
        self._progress = progress
        self._task = progress.add_task(description, total=total)

    def _draw(self, note):
        text = f"{self.description} [dim]{note}[/]" if note else None
        kwargs = {"description": text} if text is not None else {}
        self._progress.update(self._task, completed=self.completed, total=self.total, **kwargs)

    def print(self, text):
        self._progress.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def _close(self):
        self._progress.remove_task(self._task)


class _PlainBar(Bar):
    """Without rich: one self-rewriting line, `description [done/total] note  12 s`, ticking every second."""

    def __init__(self, description, total, stream):
        super().__init__(description, total)
        self._stream = stream
        self._note = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True)
        self._thread.start()

    def _line(self) -> str:
        count = f" [{self.completed}/{self.total if self.total is not None else '?'}]"
        width = max(20, _columns(self._stream) - 1)
        text = f"{self.description}{count} {self._note}".rstrip() + f"  {self.elapsed:.0f} s"
        return text if len(text) <= width else text[:width - 3] + "..."

    def _draw(self, note):
        if note is not None:
            self._note = note
        with _LOCK:
            self._stream.write("\r\x1b[K" + self._line())
            self._stream.flush()

    def _tick(self):
        while not self._stop.wait(1.0):
            self._draw(None)

    def print(self, text):
        with _LOCK:
            self._stream.write("\r\x1b[K" + text + "\n" + self._line())
            self._stream.flush()

    def _close(self):
        self._stop.set()
        self._thread.join()
        with _LOCK:
            self._stream.write("\r\x1b[K")
            self._stream.flush()


def _columns(stream) -> int:
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        columns = 0
    if columns <= 0:  # a terminal that reports no size (a bare pty): what the environment says, else 80
        columns = int(os.environ["COLUMNS"]) if os.environ.get("COLUMNS", "").isdigit() else 80
    return columns


def _rich_progress(stream):
    try:
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                                   TimeElapsedColumn)
    except ImportError:
        return None
    console = Console(file=stream, stderr=stream is sys.stderr)
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=30),
                    MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True,
                    redirect_stdout=_isatty(sys.stdout), redirect_stderr=True)


@contextlib.contextmanager
def bar(description: str, total: int | None = None, *, stream=None):
    """A progress bar for the duration of the `with` block (see the module's docstring). TOTAL None: a
    count without an end (a spinner and the elapsed time)."""
    stream = stream if stream is not None else sys.stderr
    if not enabled(stream):
        yield Bar(description, total)
        return
    with _LOCK:
        progress = _LIVE["progress"]
        if progress is None:
            progress = _rich_progress(stream)
            if progress is not None:
                progress.start()
                _LIVE["progress"] = progress
        if progress is not None:
            _LIVE["depth"] += 1
            handle = _RichBar(description, total, progress)
        elif _LIVE["depth"]:  # a plain bar is already drawn on this line: the inner one stays silent
            progress, handle = None, Bar(description, total)
        else:
            _LIVE["depth"] += 1
            handle = _PlainBar(description, total, stream)
    try:
        yield handle
    finally:
        with _LOCK:
            handle._close()
            if type(handle) is not Bar:
                _LIVE["depth"] -= 1
            if progress is not None and _LIVE["depth"] == 0:
                _LIVE["progress"] = None
                progress.stop()
