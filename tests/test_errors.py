"""Bad-input fixtures: every problem of a file is reported, located, in one run, with exit code 2.

Each module in tests/errors/ is a kernel module a Numba user might write, with one mistake (a few have
two).  Its header states what `numba2cuda translate` must print, one line per diagnostic:

    # expect: LINE:COL: <construct substring>: <message substring>

(COL is 1-based, as printed; the message part may be left empty.)  For every fixture the translator must

* exit with code 2, print no traceback and write no output file;
* print, for every expect line, `<fixture path>:LINE:COL: error: ...` with the construct substring and
  then the message substring on that line;
* print exactly as many `error:` lines as there are expect lines (no follow-on noise, nothing missed);
* follow each error with the offending source line and a caret line whose caret sits under COL.

All fixtures run in-process through `translator.cli.main` (fast); a few also run as a real subprocess
(`python -m translator.cli translate ...`) to prove the process exit code and the absence of a traceback.
"""
from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURE_DIR = REPO / "tests" / "errors"
FIXTURES = sorted(FIXTURE_DIR.glob("*.py"))
EXIT_USAGE = 2
INDENT = "    "  # Diagnostic.render indents the source and caret lines by four spaces

# A handful of fixtures that also run as a real process: the exit status is the process's own.
SUBPROCESS_FIXTURES = [
    "for_loop_over_prange.py",
    "kernel_without_types.py",
    "unknown_jit_option.py",
    "two_kernels_two_problems.py",
    "tuple_variable_reassigned_a_number_on_one_branch.py",
]

EXPECT_RE = re.compile(r"^#\s*expect:\s*(\d+):(\d+):\s?(.*)$")
ERROR_LINE_RE = re.compile(r"\berror: ")


@dataclass(frozen=True)
class Expect:
    line: int
    col: int  # 1-based
    construct: str
    message: str

    def __str__(self) -> str:
        return f"{self.line}:{self.col}: {self.construct}: {self.message}"


def parse_expectations(path: Path) -> list[Expect]:
    out = []
    for text in path.read_text(encoding="utf-8").splitlines():
        if not text.startswith("#"):
            continue
        m = EXPECT_RE.match(text)
        if m is None:
            if re.match(r"^#\s*expect\b", text):
                raise ValueError(f"{path.name}: malformed expect line: {text!r}")
            continue
        construct, _, message = m.group(3).partition(": ")
        out.append(Expect(int(m.group(1)), int(m.group(2)), construct.strip(), message.strip()))
    return out


def rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def run_in_process(fixture: Path, out: Path, capsys, monkeypatch) -> tuple[int, str]:
    from translator.cli import main

    monkeypatch.chdir(REPO)
    capsys.readouterr()  # drop anything printed before
    try:
        rc = main(["translate", rel(fixture), "-o", str(out)])
    except SystemExit as exc:  # argparse
        rc = exc.code
    return rc, capsys.readouterr().err


def run_subprocess(fixture: Path, out: Path) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "translator.cli", "translate", rel(fixture), "-o", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stderr


def check(fixture: Path, rc: int, stderr: str, tmp_path: Path, out: Path) -> None:
    expects = parse_expectations(fixture)
    path = rel(fixture)
    source = fixture.read_text(encoding="utf-8").splitlines()
    lines = stderr.splitlines()
    shown = "\n".join(f"  | {l}" for l in lines) or "  | (nothing)"
    wanted = "\n".join(f"  # expect: {e}" for e in expects)
    context = f"\n--- expected ({path}):\n{wanted}\n--- stderr:\n{shown}"
    problems = []

    if "Traceback" in stderr:
        problems.append("a traceback was printed")
    if rc != EXIT_USAGE:
        problems.append(f"exit code {rc}, expected {EXIT_USAGE}")
    if out.exists():
        problems.append(f"the output file {out.name} was written")
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p != out)
    if leftovers:
        problems.append(f"stray files left next to the output: {leftovers}")

    error_lines = [i for i, l in enumerate(lines) if ERROR_LINE_RE.search(l)]
    if len(error_lines) != len(expects):
        problems.append(f"{len(error_lines)} 'error:' line(s) printed, {len(expects)} expected")

    used = set()
    for e in expects:
        prefix = f"{path}:{e.line}:{e.col}: error: "
        found = None
        for i in error_lines:
            if i in used or not lines[i].startswith(prefix):
                continue
            rest = lines[i][len(prefix):]
            at = rest.find(e.construct)
            if at < 0 or rest.find(e.message, at + len(e.construct)) < 0:
                continue
            found = i
            break
        if found is None:
            problems.append(f"missing: {prefix}{e.construct} ... {e.message}")
            continue
        used.add(found)
        src_line = lines[found + 1] if found + 1 < len(lines) else None
        caret_line = lines[found + 2] if found + 2 < len(lines) else None
        want_src = INDENT + source[e.line - 1].rstrip() if 0 < e.line <= len(source) else None
        if src_line is None or want_src is None or src_line.rstrip() != want_src:
            problems.append(f"{e.line}:{e.col}: the error is not followed by source line {e.line} "
                            f"(got {src_line!r})")
            continue
        if caret_line is None or caret_line.strip() != "^" or caret_line.index("^") != len(INDENT) + e.col - 1:
            problems.append(f"{e.line}:{e.col}: the caret line does not put '^' under column {e.col} "
                            f"(got {caret_line!r})")

    assert not problems, "\n".join(problems) + context


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.stem)
def test_error_fixture(fixture, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out.cu"
    rc, stderr = run_in_process(fixture, out, capsys, monkeypatch)
    check(fixture, rc, stderr, tmp_path, out)


@pytest.mark.parametrize("name", SUBPROCESS_FIXTURES, ids=lambda n: n[:-3])
def test_error_fixture_subprocess(name, tmp_path):
    fixture = FIXTURE_DIR / name
    assert fixture.exists(), f"{name} is listed in SUBPROCESS_FIXTURES but missing from tests/errors/"
    out = tmp_path / "out.cu"
    rc, stderr = run_subprocess(fixture, out)
    check(fixture, rc, stderr, tmp_path, out)


def test_enough_fixtures():
    assert len(FIXTURES) >= 30, f"only {len(FIXTURES)} fixtures in {rel(FIXTURE_DIR)}"


def test_every_fixture_states_its_errors():
    missing = [p.name for p in FIXTURES if not parse_expectations(p)]
    assert not missing, f"fixtures without a '# expect:' line: {missing}"
    several = [p.name for p in FIXTURES if len(parse_expectations(p)) >= 2]
    assert len(several) >= 2, f"at least two fixtures must expect two problems in one file, got {several}"
