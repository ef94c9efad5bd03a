"""Every corpus kernel's translation, run on the CPU runtime with the kernel's own example() launch,
matches the NumPy reference; outputs are pre-filled with NaN/sentinels, inputs must come back
unchanged, and two runs under different uninitialised-memory poison must agree bit for bit.

The Numba module is imported in a subprocess under NUMBA_ENABLE_CUDASIM=1 (its signatures would
otherwise ask for a GPU at import); the translation itself never imports it.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from corpus_harness import LLM_ONLY

pytestmark = pytest.mark.needs("g++")  # the translations run on the CPU runtime (g++)

ROOT = Path(__file__).resolve().parent.parent
# LLM_ONLY: the LLM backend's corpus (tests/test_llm.py), not translated by the rules
CORPUS = sorted(p for p in (ROOT / "kernels").glob("*.py") if p.stem not in LLM_ONLY)

SCRIPT = r'''
import json, sys
import numpy as np
sys.path.insert(0, "tests")
import corpus_harness as h
from translator.runtime.cpu_launch import load_cpu
from translator.runtime.cpurun import set_poison

path = sys.argv[1]
mod = h.load_module(path)
ex = mod.example(np.random.default_rng(int(sys.argv[2])))
h.check_structure(ex)
k = ex["kernel"]
# the module's name for the kernel (a factory's kernel is named by its binding, as the translation names it)
name = next((n for n, v in vars(mod).items() if v is k), None) or getattr(k, "__name__", None) \
    or getattr(getattr(k, "fn", None), "__name__", None) or k.py_func.__name__
cpu = load_cpu(path)
ex["kernel"] = getattr(cpu, name)
pristine = [a.copy() if isinstance(a, np.ndarray) else a for a in ex["args"]]
results = []
for poison in (0xFF, 0x00):
    set_poison(ex["kernel"].lib, poison)
    ex["args"] = [a.copy() if isinstance(a, np.ndarray) else a for a in pristine]
    h.launch_and_check(ex)
    results.append([ex["args"][i].tobytes() for i in sorted(ex["expected"])])
assert results[0] == results[1], "output depends on uninitialised memory (two poison bytes differ)"
print(json.dumps({"ok": True, "kernel": name}))
'''


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_translation_runs_example_on_cpu(path):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(path), "0"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{path.name}:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    assert json.loads(proc.stdout.strip().splitlines()[-1])["ok"]
