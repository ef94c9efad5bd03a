"""`numba2cuda verify kernels/ [-j N]` -> one verify per module (each in its own process, N at a time), a summary
table, one JSON and one JUnit file for the whole batch, and one exit code (translator/batch.py says which)."""

from __future__ import annotations

import json
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from ..atomic import write_atomically
from ..batch import (batch_exit_code, expand, failures_text, first_error_line, run_all, strip_options, summary_line,
                     table, verdict_word)
from ..errors import EXIT_OK


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def case_counts(doc) -> tuple[int, int]:
    """(equivalent cases, cases) of one module's verify JSON."""
    cases = (doc or {}).get("cases") or []
    return sum(1 for c in cases if c.get("equivalent")), len(cases)


def first_problem(doc) -> str:
    for case in (doc or {}).get("cases") or []:
        for problem in (case.get("problems") or []) + (case.get("undecided") or []):
            return f"{case.get('kernel')} size {case.get('size')}: {problem}"
    return ""


def merged_junit(outcomes, folder: Path) -> str:
    """One <testsuites> with every module's suites; a module that gave no verdict (exit 2, a crash) is a suite
    with one errored test, so the CI report shows it."""
    root = ET.Element("testsuites", name="numba2cuda verify")
    for n, o in enumerate(outcomes):
        suites = []
        try:
            tree = ET.parse(folder / f"{n}.xml").getroot()
            suites = [tree] if tree.tag == "testsuite" else list(tree.iter("testsuite"))
        except (OSError, ET.ParseError):
            pass
        if not suites:
            suite = ET.SubElement(root, "testsuite", name=o.path, tests="1", failures="0", errors="1")
            case = ET.SubElement(suite, "testcase", classname=o.path, name="verify")
            ET.SubElement(case, "error", message=first_error_line(o) or f"exit {o.rc}").text = o.stderr[-4000:]
        root.extend(suites)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def verify_batch(args) -> int:
    specs = list(args.file)
    paths = expand(specs, command="verify")
    rest = strip_options(args.argv[1:], {"-j": 1, "--jobs": 1, "--json": 1, "--junit": 1}, specs)
    report = sys.stderr if args.json == "-" or args.junit == "-" else sys.stdout  # stdout then holds the machine output
    print(f"note: verify imports and runs each of these {len(paths)} modules (example() and the Numba original, "
          "in subprocesses); the translator itself never does.", file=report, flush=True)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="numba2cuda-verify-") as tmp:
        folder = Path(tmp)
        index = {p: n for n, p in enumerate(paths)}

        def argv(path):
            n = index[path]
            return ["verify", path, *rest, "--json", str(folder / f"{n}.json"), "--junit", str(folder / f"{n}.xml"),
                    "--quiet"]

        def collect(path, outcome):
            outcome.extra = _read_json(folder / f"{index[path]}.json") or {}

        outcomes = run_all(paths, argv, jobs=args.jobs, description=f"verify {len(paths)} modules", collect=collect)
        junit = merged_junit(outcomes, folder) if args.junit else None
    rows = []
    for o in outcomes:
        ok, total = case_counts(o.extra)
        word = {0: "EQUIVALENT", 1: "NOT EQUIVALENT", 3: "UNDECIDED"}.get(o.rc, verdict_word(o.rc))
        why = first_problem(o.extra) if o.rc != EXIT_OK else ""
        rows.append([o.path, word, f"{ok}/{total}" if total else "-", o.extra.get("device", "-"), f"{o.seconds:.1f}",
                     why or (first_error_line(o) if o.rc != EXIT_OK else "")])
    print(table(["module", "verdict", "cases ok", "translation ran on", "s", "first problem"], rows), file=report)
    failed = failures_text(outcomes)
    if failed:
        print(failed, file=report)
    print(summary_line(outcomes, "module", time.monotonic() - t0), file=report)
    doc = {"modules": [{"path": o.path, "exit": o.rc, "seconds": round(o.seconds, 2), "result": o.extra or None,
                        "error": first_error_line(o) if o.rc not in (0, 1) else ""} for o in outcomes],
           "equivalent": all(o.rc == EXIT_OK for o in outcomes)}
    if args.json:
        emit(args.json, json.dumps(doc, indent=2) + "\n")
    if junit is not None:
        emit(args.junit, junit)
    return batch_exit_code(outcomes)


def emit(target: str, text: str) -> None:
    """TEXT to the file TARGET (atomically), or to standard output for `-`."""
    if target == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        write_atomically(Path(target), text)
