"""verify's plan -> the Numba original's outputs per case, from reference.py run in a subprocess.

The user's module is imported and run only there (under NUMBA_ENABLE_CUDASIM=1 for the simulator), with a
scrubbed environment. It reports its progress on stderr ("n2c-progress: done/total"), which is passed on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

from ..errors import UserError
from ..sandbox import scrubbed_env  # the user's module never sees a secret

PROGRESS = "n2c-progress: "


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
        proc = subprocess.Popen([sys.executable, str(script), str(path), outdir, json.dumps(cfg)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
        err_lines: list[str] = []
        reader = threading.Thread(target=_pump, args=(proc.stderr, err_lines, progress), daemon=True)
        # stdout is read by a thread too: communicate() would also read (and close) stderr under the pump's feet
        out_parts: list[str] = []
        out_reader = threading.Thread(target=lambda: out_parts.append(proc.stdout.read()), daemon=True)
        reader.start()
        out_reader.start()
        try:
            proc.wait(timeout=3600)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise UserError(f"{path}: error: running the module's example() {where} took more than an hour") from None
        finally:
            out_reader.join(timeout=10)
            reader.join(timeout=10)
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


def _pump(stream, sink: list, progress) -> None:
    for line in stream:
        if line.startswith(PROGRESS):
            if progress is not None:
                done, _, total = line[len(PROGRESS):].strip().partition("/")
                try:
                    progress(int(done), int(total))
                except ValueError:
                    pass
            continue
        sink.append(line.rstrip("\n"))
