"""located problems -> `file:line:col` diagnostics with the source line and a caret."""

from __future__ import annotations

from collections import ChainMap
from dataclasses import dataclass, field

#: The process exit codes of every command: equivalent/ok, a verdict against (not equivalent, a failed build),
#: a usage or translation error (located, no traceback), a bug in numba2cuda (with its traceback).
EXIT_OK, EXIT_VERDICT, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 70
#: verify's third verdict: undecided (the original cannot be run or trusted where it would decide a case)
EXIT_UNDECIDED = 3


@dataclass(frozen=True)
class Location:
    path: str
    line: int  # 1-based
    col: int  # 0-based, as libcst reports it

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col + 1}"


@dataclass(frozen=True)
class Diagnostic:
    loc: Location
    construct: str  # what was found, in the user's words: "list comprehension"
    message: str  # why it cannot be translated
    hint: str = ""  # what to write instead
    source_line: str = ""

    def render(self) -> str:
        out = [f"{self.loc}: error: {self.construct}: {self.message}"]
        if self.source_line:
            line, col = _window(self.source_line.rstrip("\n"), self.loc.col)
            out.append("    " + line)
            out.append("    " + " " * col + "^")
        if self.hint:
            out.append(f"    hint: {self.hint}")
        return "\n".join(out)

    def render_note(self) -> str:
        """One line, for what was accepted but has no effect (an option the translation ignores)."""
        return f"{self.loc}: note: {self.construct}: {self.message}"


WINDOW = 120  # source characters shown around the caret


def _window(line: str, col: int) -> tuple[str, int]:
    """A long source line (a generated 2 MB expression) cut to WINDOW characters around the column."""
    if len(line) <= WINDOW:
        return line, col
    start = min(max(col - WINDOW // 2, 0), len(line) - WINDOW)
    text = line[start:start + WINDOW]
    prefix = "..." if start > 0 else ""
    suffix = "..." if start + WINDOW < len(line) else ""
    return prefix + text + suffix, len(prefix) + col - start


class UserError(Exception):
    """A problem with the user's input; reported without a traceback, exit code 2."""

    def __init__(self, diagnostics: list[Diagnostic] | str, notes: list[Diagnostic] = ()):
        if isinstance(diagnostics, str):
            self.diagnostics: list[Diagnostic] = []
            self.text = diagnostics
        else:
            self.diagnostics = sorted(diagnostics, key=lambda d: (d.loc.path, d.loc.line, d.loc.col))
            self.text = "\n".join([n.render_note() for n in notes] + [d.render() for d in self.diagnostics])
            if len(self.diagnostics) > 1:
                self.text += f"\n{len(self.diagnostics)} errors"
        super().__init__(self.text)


class Unsupported(Exception):
    """Raised inside lowering at the first problem in one statement; collected into a Diagnostic."""

    def __init__(self, node, construct: str, message: str, hint: str = ""):
        self.node = node
        self.construct = construct
        self.message = message
        self.hint = hint
        super().__init__(f"{construct}: {message}")


@dataclass
class Reporter:
    """Collects every problem of a file, so one run reports them all."""

    path: str
    source_lines: list[str]
    positions: object  # libcst PositionProvider mapping
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: reporters of the modules whose device functions this one calls (`from .helpers import f`): their nodes
    #: are located in their own files, and their problems are this translation's
    foreign: list = field(default_factory=list)
    #: notes an error must not hide (why --import-module read the source only), printed before the errors
    notes: list = field(default_factory=list)

    def adopt(self, other: Reporter) -> None:
        """Locate OTHER's nodes too, and collect its problems with these (it and the modules it adopted)."""
        for reporter in [other, *other.foreign]:
            if reporter is not self and reporter not in self.foreign:
                self.foreign.append(reporter)
            reporter.diagnostics = self.diagnostics

    def _owner(self, node) -> tuple[Reporter, Location]:
        """The reporter of the file NODE is in, and where it is there (this file's first line if nowhere)."""
        for reporter in (self, *self.foreign):
            try:
                pos = reporter.positions[node].start
            except KeyError:
                continue
            return reporter, Location(reporter.path, pos.line, pos.column)
        return self, Location(self.path, 1, 0)

    def relocate(self, pairs) -> None:
        """Locate copies of nodes where their originals are: PAIRS gives (original, copy) for a whole tree. A node
        of PAIRS that has a place of its own (one the user wrote, kept inside a made tree) keeps it."""
        pairs = list(pairs)
        for reporter in (self, *self.foreign):
            if pairs and pairs[0][0] in reporter.positions:
                copies = {new: reporter.positions[old] for old, new in pairs
                          if old in reporter.positions and new not in reporter.positions}
                reporter.positions = ChainMap(copies, reporter.positions)
                return

    def location(self, node) -> Location:
        return self._owner(node)[1]

    def make(self, node, construct: str, message: str, hint: str = "") -> Diagnostic:
        reporter, loc = self._owner(node)
        lines = reporter.source_lines
        line = lines[loc.line - 1] if 0 < loc.line <= len(lines) else ""
        return Diagnostic(loc, construct, message, hint, line)

    def add(self, node, construct: str, message: str, hint: str = "") -> None:
        diag = self.make(node, construct, message, hint)
        if diag not in self.diagnostics:
            self.diagnostics.append(diag)

    def add_unsupported(self, exc: Unsupported) -> None:
        self.add(exc.node, exc.construct, exc.message, exc.hint)

    def raise_if_any(self) -> None:
        if self.diagnostics:
            raise UserError(self.diagnostics, self.notes)


class NotVerified(Exception):
    """No translation got through the build + verify gate (the LLM backend); reported without a traceback,
    exit code 1, nothing written."""

    def __init__(self, text: str):
        self.text = text
        super().__init__(text)


class Poisoned:
    """A name whose definition was already reported; its uses raise Reported, which is not reported again."""

    def __init__(self, name):
        self.name = name


class Reported(Exception):
    """A problem already reported where it arose (a failed definition): callers skip it silently."""
