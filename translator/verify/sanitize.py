"""verify --sanitize: the translation's launches on the GPU under compute-sanitizer -> its errors as problems.

Each tool (memcheck, racecheck, synccheck, initcheck) runs a child Python process that builds (cached) and
launches the translation on a few of the verified cases' example inputs (`replay`, below); the sanitizer's
"ERROR SUMMARY" decides. Where compute-sanitizer is not installed, a note says so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from ..sandbox import scrubbed_env

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
MAX_CASES = 4  # racecheck slows a launch down by orders of magnitude: a few small cases suffice
# memcheck, synccheck, initcheck: "ERROR SUMMARY: 0 errors"; racecheck: "RACECHECK SUMMARY: 0 hazards displayed
# (0 errors, 0 warnings)"
_SUMMARY = re.compile(r"(?:ERROR SUMMARY:\s*|RACECHECK SUMMARY:[^(\n]*\()(\d+)\s+error")


def find_sanitizer() -> str | None:
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home and os.path.exists(os.path.join(home, "bin", "compute-sanitizer")):
            return os.path.join(home, "bin", "compute-sanitizer")
    return None


def run_sanitizers(load: dict, kernels: dict, reference: list) -> tuple[list[str], list[str]]:
    """(problems, notes) of compute-sanitizer's tools over the first few example cases."""
    tool = find_sanitizer()
    if tool is None:
        return [], ["--sanitize: compute-sanitizer was not found (CUDA_HOME/bin or PATH); skipped"]
    from .check import launch_args, launch_config
    from .runners import param_specs

    cases = [(m, a) for m, a in reference if m.get("distribution") == "example"][:MAX_CASES]
    problems, notes = [], []
    with tempfile.TemporaryDirectory(prefix="n2c-sanitize-") as tmp:
        plan = []
        for n, (meta, arrays) in enumerate(cases):
            inputs = {int(k[3:]): v for k, v in arrays.items() if k.startswith("arg")}
            args = launch_args(meta, inputs, 0)
            grid, block, shared = launch_config(meta)
            np.savez(os.path.join(tmp, f"case{n}.npz"), *[a for a in args if isinstance(a, np.ndarray)])
            plan.append(dict(load, kernel=meta["kernel"], grid=_list(grid), block=_list(block), shared=int(shared),
                             params=param_specs(kernels[meta["kernel"]], args)))
        with open(os.path.join(tmp, "plan.json"), "w") as f:
            json.dump(plan, f)
        code = f"from translator.verify.sanitize import replay; replay({tmp!r})"
        env = scrubbed_env(PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        for name in TOOLS:
            cmd = [tool, "--tool", name, "--print-limit", "10", sys.executable, "-c", code]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env)
            except subprocess.TimeoutExpired:
                problems.append(f"compute-sanitizer {name}: did not finish within 30 minutes")
                continue
            out = proc.stdout + proc.stderr
            m = _SUMMARY.search(out)
            errors = int(m.group(1)) if m else None
            if errors:
                first = [line.strip() for line in out.splitlines() if line.startswith("========") and
                         not line.startswith("========= ERROR SUMMARY")][:6]
                problems.append(f"compute-sanitizer {name}: {errors} error(s) on {len(cases)} case(s):\n    "
                                + "\n    ".join(first))
            elif errors is None or proc.returncode != 0:
                notes.append(f"compute-sanitizer {name}: no error summary (exit {proc.returncode}): "
                             + (out.strip().splitlines() or ["no output"])[-1])
            else:
                notes.append(f"compute-sanitizer {name}: 0 errors on {len(cases)} case(s)")
    return problems, notes


def _list(v):
    return [int(x) for x in v] if isinstance(v, (list, tuple)) else [int(v)]


def replay(directory: str) -> None:
    """The child under compute-sanitizer: each planned launch once."""
    from ..runtime.gpu_worker import run_case

    with open(os.path.join(directory, "plan.json")) as f:
        plan = json.load(f)
    for n, spec in enumerate(plan):
        with np.load(os.path.join(directory, f"case{n}.npz")) as npz:
            arrays = [npz[k] for k in sorted(npz.files, key=lambda k: int(k.split("_")[1]))]
        result, _ = run_case(spec, arrays)
        if result.get("error"):
            print(f"launch {n}: {result['error']}", file=sys.stderr)
