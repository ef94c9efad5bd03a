"""`numba2cuda bench kernels/` -> one bench per module, one after another (they share the GPU, and timings taken
side by side would disturb each other), a summary of each case's default translation against Numba, one JSON
for the batch and one exit code (translator/batch.py)."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from ..atomic import write_atomically
from ..batch import (batch_exit_code, expand, failures_text, first_error_line, run_all, strip_options, summary_line,
                     table, verdict_word)
from ..errors import UserError
from .report import check_text


def _ratio(value) -> str:
    return f"{value['ratio']:.2f}x" if value else "-"


def summary_rows(path: str, rc: int, doc: dict | None, error: str) -> list[list[str]]:
    """One row per case: its default translation's check and speedups over the Numba original."""
    if not doc or not doc.get("cases"):
        return [[path, "-", "-", verdict_word(rc), "-", "-", error]]
    rows = []
    for case in doc["cases"]:
        v = next((v for v in case["variants"] if v["role"] == "translation" and v["default"]), None)
        rows.append([path, case["kernel"], str(case["size"]), check_text(v) if v else "-",
                     _ratio(v and v.get("vs_numba_device")), _ratio(v and v.get("vs_numba_end_to_end")),
                     "; ".join(case.get("failures") or [])])
    return rows


def run(args) -> int:
    specs = list(args.file)
    if args.plot:
        raise UserError("numba2cuda bench: error: --plot draws one module's chart\n    hint: bench the modules "
                        "with --json RESULT.json, then python3 -m translator.bench.report on each module's entry")
    if args.cu:
        raise UserError("numba2cuda bench: error: --cu gives one module's translation, not a batch's")
    if args.md:
        raise UserError("numba2cuda bench: error: --md writes one module's report\n    hint: bench the modules "
                        "with --json RESULT.json; each module's entry renders with python3 -m translator.bench.report")
    paths = expand(specs, command="bench")
    rest = strip_options(args.argv[1:], {"--json": 1}, specs)
    report = sys.stderr if args.json == "-" else sys.stdout
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="numba2cuda-bench-") as tmp:
        folder = Path(tmp)
        index = {p: n for n, p in enumerate(paths)}

        def collect(path, outcome):
            try:
                outcome.extra = json.loads((folder / f"{index[path]}.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                outcome.extra = {}

        outcomes = run_all(paths, lambda p: ["bench", p, *rest, "--json", str(folder / f"{index[p]}.json"),
                                             "--quiet"], jobs=1, description=f"bench {len(paths)} modules",
                           collect=collect)
    rows = [row for o in outcomes for row in summary_rows(o.path, o.rc, o.extra, first_error_line(o))]
    print(table(["module", "kernel", "size", "check", "vs Numba", "vs Numba e2e", "problem"], rows), file=report)
    failed = failures_text(outcomes)
    if failed:
        print(failed, file=report)
    print(summary_line(outcomes, "module", time.monotonic() - t0), file=report)
    doc = {"format": "numba2cuda-bench-batch/1", "modules": {o.path: o.extra or {"exit": o.rc,
                                                                               "error": first_error_line(o)}
                                                            for o in outcomes},
           "ok": all(o.rc == 0 for o in outcomes)}
    if args.json == "-":
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
    elif args.json:
        write_atomically(Path(args.json), json.dumps(doc, indent=1) + "\n")
    return batch_exit_code(outcomes)
