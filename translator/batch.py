"""folders, globs and lists of modules -> one child command per module, N at a time, and a summary table.

`numba2cuda translate kernels/`, `verify 'kernels/*.py' -j 4` and `bench kernels/` run the single-module
command once per module, each in its own process (`python -m translator COMMAND FILE ...`): a module that
crashes, hangs or exits with an error is one row of the summary, never the end of the batch, and N of them
run at a time on N cores. The batch's exit code is the worst of its modules': 70 (a numba2cuda bug) over 2
(usage or translation error) over 1 (a verdict against) over 0.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import progress
from .errors import EXIT_INTERNAL, EXIT_OK, EXIT_UNDECIDED, EXIT_USAGE, EXIT_VERDICT, UserError

GLOB_CHARS = set("*?[")
SKIP_DIRS = {"__pycache__", "build", "dist", "node_modules"}


def is_glob(spec: str) -> bool:
    return bool(GLOB_CHARS & set(spec))


def is_batch(specs) -> bool:
    """Several inputs, a folder or a glob: the batch path; a single file (or `-`): the command itself."""
    if isinstance(specs, str):
        specs = [specs]
    return len(specs) > 1 or any(s != "-" and (is_glob(s) or os.path.isdir(s)) for s in specs)


def mentions_a_kernel(path: Path) -> bool:
    """Does the module mention a way Numba makes GPU code: cuda.jit, or a @vectorize/@guvectorize (whose target
    says cuda; kernels/soft_threshold.py has no cuda.jit at all)?"""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return "cuda.jit" in text or ("vectorize" in text and "cuda" in text)


def expand(specs, *, command: str) -> list[str]:
    """The modules a batch runs, in order and each once: files as given, a folder's *.py files (recursively, hidden
    and build folders skipped) that mention cuda.jit or a CUDA ufunc, and a glob's matches (`**` recurses)."""
    out: list[str] = []
    for spec in specs:
        if spec == "-":
            raise UserError(f"numba2cuda {command}: error: - (standard input) cannot be one module of a batch\n"
                            "    hint: give - alone, or files and folders")
        if os.path.isdir(spec):
            found = []
            for folder, dirs, names in os.walk(spec):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
                found += [Path(folder) / n for n in sorted(names) if n.endswith(".py")]
            found = [str(p) for p in found if mentions_a_kernel(p)]
            if not found:
                raise UserError(f"{spec}: error: no Python module with a @cuda.jit kernel in this folder")
        elif is_glob(spec):
            found = sorted(p for p in glob.glob(spec, recursive=True) if os.path.isfile(p))
            if not found:
                raise UserError(f"{spec}: error: no file matches this pattern")
        elif os.path.isfile(spec):
            found = [spec]
        else:
            raise UserError(f"{spec}: error: no such file or folder")
        out += [p for p in found if p not in out]
    return out


def strip_options(argv: list[str], drop: dict[str, int], inputs) -> list[str]:
    """ARGV without the batch's inputs and without the options in DROP ({option: how many values it takes}),
    in either spelling (`-o X`, `-oX`, `--output X`, `--output=X`)."""
    inputs = list(inputs)
    out, i = [], 0
    while i < len(argv):
        token = argv[i]
        name = token.split("=", 1)[0]
        if name in drop:
            i += 1 + (drop[name] if "=" not in token else 0)
            continue
        short = next((o for o in drop if len(o) == 2 and token.startswith(o) and len(token) > 2
                      and not o.startswith("--")), None)
        if short and drop[short]:
            i += 1
            continue
        if token in inputs:
            inputs.remove(token)
            i += 1
            continue
        out.append(token)
        i += 1
    return out


@dataclass
class Outcome:
    path: str
    rc: int
    seconds: float
    stdout: str
    stderr: str
    extra: dict = field(default_factory=dict)  # what the command's own result file said


def run_one(argv: list[str], timeout: float | None) -> tuple[int, str, str]:
    env = dict(os.environ, NUMBA2CUDA_PROGRESS="0")  # the batch draws the one bar
    try:
        proc = subprocess.run([sys.executable, "-m", "translator", *argv], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, env=env, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        return EXIT_VERDICT, out, f"timed out after {timeout:g} s"
    rc = proc.returncode
    if rc < 0:  # killed by a signal: numba2cuda itself died, which is always a bug
        return EXIT_INTERNAL, proc.stdout, proc.stderr + f"\nkilled by signal {-rc}"
    return rc, proc.stdout, proc.stderr


def run_all(paths: list[str], make_argv, *, jobs: int, description: str, timeout: float | None = None,
            collect=None) -> list[Outcome]:
    """Run `make_argv(path)` for each path, JOBS at a time, with one progress bar; COLLECT(path, outcome) may
    read the child's result files into outcome.extra. Outcomes come back in PATHS' order."""
    if jobs < 1:
        raise UserError(f"numba2cuda: error: -j/--jobs must be at least 1, got {jobs}")

    def one(path):
        t0 = time.monotonic()
        rc, out, err = run_one(make_argv(path), timeout)
        outcome = Outcome(path, rc, time.monotonic() - t0, out, err)
        if collect is not None:
            collect(path, outcome)
        return outcome

    results: dict[str, Outcome] = {}
    with progress.bar(description, total=len(paths)) as bar, ThreadPoolExecutor(max_workers=jobs) as pool:
        for outcome in pool.map(one, paths):
            results[outcome.path] = outcome
            bar.advance(note=f"{Path(outcome.path).name}: {verdict_word(outcome.rc)}")
    return [results[p] for p in paths]


def verdict_word(rc: int) -> str:
    return {EXIT_OK: "ok", EXIT_VERDICT: "FAILED", EXIT_USAGE: "ERROR", EXIT_UNDECIDED: "UNDECIDED"}.get(
        rc, f"CRASHED (exit {rc})")


def batch_exit_code(outcomes: list[Outcome]) -> int:
    codes = {o.rc for o in outcomes}
    for code in (EXIT_INTERNAL, EXIT_USAGE, EXIT_VERDICT, EXIT_UNDECIDED):
        if code in codes:
            return code
    return EXIT_INTERNAL if codes - {EXIT_OK} else EXIT_OK


def first_error_line(outcome: Outcome) -> str:
    """The line that says why a module failed, for the summary (its whole output follows the table)."""
    lines = [ln for ln in outcome.stderr.splitlines() if ln.strip() and not ln.startswith("note: ")]
    for ln in lines:
        if "error" in ln.lower() or "FAIL" in ln:
            return ln.strip()
    return lines[-1].strip() if lines else ""


def table(columns: list[str], rows: list[list[str]], *, max_width: int = 120) -> str:
    """A plain aligned table; the last column is cut so a row fits MAX_WIDTH."""
    rows = [[str(c) for c in r] for r in rows]
    widths = [max(len(r[k]) for r in [columns, *rows]) for k in range(len(columns))]
    lead = sum(w + 2 for w in widths[:-1]) + 2
    widths[-1] = max(8, min(widths[-1], max_width - lead))

    def line(r):
        last = r[-1] if len(r[-1]) <= widths[-1] else r[-1][:widths[-1] - 3] + "..."
        return ("  " + "  ".join(c.ljust(w) for c, w in zip(r[:-1], widths)) + "  " + last).rstrip()

    return "\n".join([line(columns), *(line(r) for r in rows)])


def summary_line(outcomes: list[Outcome], noun: str, seconds: float) -> str:
    counts = {"ok": 0, "failed": 0, "error": 0, "crashed": 0}
    for o in outcomes:
        counts[verdict_word(o.rc).split(" ")[0].lower()] += 1
    parts = ", ".join(f"{n} {w}" for w, n in counts.items() if n)
    return f"{len(outcomes)} {noun}{'s' * (len(outcomes) != 1)}: {parts} ({seconds:.1f} s)"


def failures_text(outcomes: list[Outcome]) -> str:
    """Each failed module's own output, after the table, so nothing is lost."""
    blocks = []
    for o in outcomes:
        if o.rc != EXIT_OK:
            text = (o.stdout + ("\n" if o.stdout and not o.stdout.endswith("\n") else "") + o.stderr).rstrip()
            blocks.append(f"--- {o.path} (exit {o.rc})\n{text}")
    return "\n".join(blocks)


# --------------------------------------------------------------------------- translate


def translation_name(path: str, emit: str) -> str:
    """The file a single `translate PATH --emit EMIT` writes by default (torch: an importable module name)."""
    stem = Path(path).stem
    if emit == "torch":
        ident = "".join(c if c.isalnum() else "_" for c in stem)
        return ("_" + ident if ident[:1].isdigit() else ident) + "_torch.py"
    return stem + {"cu": ".cu", "ir": ".ir.txt"}[emit]


def translate(args) -> int:
    """`numba2cuda translate DIR|GLOB|FILE... [-o DIR] [-j N]`: each module's translation into DIR (default: the
    current folder), named as a single translate names it; a summary table on stderr."""
    specs = list(args.file)
    paths = expand(specs, command="translate")
    out_dir = Path(args.output or ".")
    if args.output == "-":
        raise UserError("numba2cuda translate: error: -o - (standard output) takes one module, not a batch\n"
                        "    hint: -o DIR writes each translation into DIR")
    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(f"{out_dir}: error: with several modules, -o names a folder, and this is a file")
    targets = {p: out_dir / translation_name(p, args.emit) for p in paths}
    clashes = {}
    for p, t in targets.items():
        clashes.setdefault(t, []).append(p)
    clashes = {t: ps for t, ps in clashes.items() if len(ps) > 1}
    if clashes:
        t, ps = next(iter(clashes.items()))
        raise UserError(f"numba2cuda translate: error: {', '.join(ps)} would all be written to {t}\n"
                        "    hint: translate those folders one at a time, each with its own -o DIR")
    out_dir.mkdir(parents=True, exist_ok=True)
    rest = strip_options(args.argv[1:], {"-o": 1, "--output": 1, "-j": 1, "--jobs": 1}, specs)
    t0 = time.monotonic()
    outcomes = run_all(paths, lambda p: ["translate", p, *rest, "-o", str(targets[p]), "--quiet"], jobs=args.jobs,
                       description=f"translate {len(paths)} modules")
    rows = []
    for o in outcomes:
        wrote = next((ln for ln in o.stderr.splitlines() if ln.startswith("wrote ")), "")
        detail = wrote.split("(", 1)[1].rstrip(")") if "(" in wrote else first_error_line(o)
        rows.append([o.path, verdict_word(o.rc), str(targets[o.path]) if o.rc == EXIT_OK else "-", detail])
    print(table(["module", "result", "output", "kernels / first error"], rows), file=sys.stderr)
    failed = failures_text(outcomes)
    if failed:
        print(failed, file=sys.stderr)
    print(summary_line(outcomes, "module", time.monotonic() - t0), file=sys.stderr)
    return batch_exit_code(outcomes)
