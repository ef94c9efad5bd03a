"""verify's plan -> the Numba original's outputs per case, from reference.py run in a subprocess.

The user's module is imported and run only there (under NUMBA_ENABLE_CUDASIM=1 for the simulator), with a
scrubbed environment. It reports its progress on stderr ("n2c-progress: done/total"), which is passed on,
and the time limit of each launch of the original ("n2c-case: seconds", then "n2c-case: done"): a launch past
it is ended here, by ending the process, which reference.py then resumes from its journal after that case. A
launch of the original that breaks the CUDA context (an out-of-bounds access on the GPU) ends the process too
(CONTEXT_LOST), so that the cases after it run in a fresh one rather than all failing as the original's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from ..errors import UserError
from ..sandbox import scrubbed_env  # the user's module never sees a secret
from .reference import CASE, CONTEXT_LOST

PROGRESS = "n2c-progress: "
MAX_RESUMES = 50  # runs ended for an overrun, at most one per kernel, example and kind of redrawn input


def run_reference(path: str, cfg: dict, progress=None) -> tuple[list, dict]:
    """([(meta, arrays)], info) for the plan CFG; progress(done, total) as cases finish."""
    device = cfg["device"]
    env = scrubbed_env()
    if device == "simulator":
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    else:
        env.pop("NUMBA_ENABLE_CUDASIM", None)
    script = Path(__file__).with_name("reference.py")
    where = "on the GPU" if device == "cuda" else "under the CUDA simulator"
    with tempfile.TemporaryDirectory(prefix="n2c-verify-") as outdir:
        for attempt in range(MAX_RESUMES + 1):
            if attempt == MAX_RESUMES:
                cfg = dict(cfg, no_restart=True)  # the last run goes on in a broken context rather than stop
            proc, out_parts, err_lines, overran = _run_script(script, path, outdir, cfg, env, progress, where)
            if not overran and proc.returncode != CONTEXT_LOST:
                break
            # carry on from the journal, after the case that did not end or that broke the CUDA context
            cfg = dict(cfg, resume=True)
        lines = "".join(out_parts).strip().splitlines()
        if proc.returncode != 0 or not lines:
            tail = "\n".join(err_lines[-15:])
            raise UserError(f"{path}: error: running the module's example() {where} failed "
                            f"(exit {proc.returncode}):\n{tail}")
        data = json.loads(lines[-1])
        if "error" in data:
            raise UserError(f"{path}: error: {data['error']}")
        cases = []
        for meta in data["cases"]:
            with np.load(os.path.join(outdir, f"case{meta['case']}.npz")) as npz:
                cases.append((meta, {k: npz[k] for k in npz.files}))
    return cases, data


def _run_script(script, path, outdir, cfg, env, progress, where):
    """Run reference.py once: (proc, stdout parts, stderr lines, whether it was ended for a launch of the original
    that overran its limit: a GPU kernel, or compiled code holding the GIL, cannot be stopped from inside)."""
    proc = subprocess.Popen([sys.executable, str(script), str(path), outdir, json.dumps(cfg)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    err_lines: list[str] = []
    launch = {"deadline": None}
    reader = threading.Thread(target=_pump, args=(proc.stderr, err_lines, progress, launch), daemon=True)
    # stdout is read by a thread too: communicate() would also read (and close) stderr under the pump's feet
    out_parts: list[str] = []
    out_reader = threading.Thread(target=lambda: out_parts.append(proc.stdout.read()), daemon=True)
    reader.start()
    out_reader.start()
    overran, end = False, time.monotonic() + 3600
    try:
        while proc.poll() is None:
            now = time.monotonic()
            deadline = launch["deadline"]
            if deadline is not None and now > deadline:
                overran = True
                break
            if now > end:
                raise UserError(f"{path}: error: running the module's example() {where} took more than an hour")
            time.sleep(0.1)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        out_reader.join(timeout=10)
        reader.join(timeout=10)
    return proc, out_parts, err_lines, overran


def _pump(stream, sink: list, progress, launch: dict) -> None:
    for line in stream:
        if line.startswith(CASE):
            limit = line[len(CASE):].strip()
            launch["deadline"] = None if limit == "done" else time.monotonic() + float(limit)
            continue
        if line.startswith(PROGRESS):
            if progress is not None:
                done, _, total = line[len(PROGRESS):].strip().partition("/")
                try:
                    progress(int(done), int(total))
                except ValueError:
                    pass
            continue
        sink.append(line.rstrip("\n"))
