"""GPU tier: every corpus kernel's translation against its Numba original on a real GPU (`pytest -m gpu`).

Skipped without a GPU (tests/conftest.py). Each kernel runs through `verify(device="cuda")` over
its declared sizes, every specialisation and the generic kernel, two seeds and the redrawn input
distributions, with the CPU runtime run beside it (`also_cpu`) so the CPU tier's agreement with the
GPU is measured on the same cases: within tolerance everywhere, bit for bit on integer outputs.
"""

import json
import os
from pathlib import Path

import numpy as np
import pytest
from corpus_harness import LLM_ONLY

from translator.cli import main
from translator.frontend.module import parse_file
from translator.lower.program import Options, build_program
from translator.emit.render import render_program
from translator.verify import format_report, verify

ROOT = Path(__file__).resolve().parent.parent
K = ROOT / "kernels"


# every corpus kernel but the LLM backend's (verified through the LLM path), as the CPU-tier tests list them
RULE_CORPUS = sorted(p.stem for p in K.glob("*.py") if p.stem not in LLM_ONLY)


@pytest.mark.gpu
@pytest.mark.parametrize("name", RULE_CORPUS)
def test_corpus_equivalent_on_gpu(name):
    result = verify(K / f"{name}.py", device="cuda", also_cpu=True, seeds=2)
    report = format_report(result)
    if os.environ.get("N2C_GPU_RESULTS"):  # keep the evidence: the report and JSON per kernel
        out = Path(os.environ["N2C_GPU_RESULTS"])
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{name}.txt").write_text(report + "\n")
        (out / f"{name}.json").write_text(json.dumps(result.to_json(), indent=1) + "\n")
    assert result.ok, report
    assert result.device == "GPU"
    assert all(c.reference == "Numba original on the GPU" for c in result.cases), report
    for c in result.cases:
        assert c.cpu_outputs, f"{c}: the CPU runtime was not compared"
        for o in c.cpu_outputs:  # the distance is information (FMA contraction); integers must agree
            if np.dtype(o.report.dtype).kind in "iub":
                assert o.report.bit_identical, f"{name} {o.name}: integer output differs between CPU runtime and GPU"


def _planted(name, old, new):
    path = K / name
    text = render_program(build_program(parse_file(str(path)), Options()), path.name)
    assert old in text, f"planting {old!r} -> {new!r}: not found in the translation of {name}"
    return text.replace(old, new, 1)


@pytest.mark.gpu
@pytest.mark.parametrize("name,old,new", [
    ("vector_add.py", "out[i] = a[i] + b[i];", ";"),  # no-op
    ("matmul_tile.py", "ms[tr][tc] =", "ms[tc][tr] ="),  # wrong tile index
])
def test_planted_bug_rejected_on_gpu(name, old, new):
    result = verify(K / name, device="cuda", cu_text=_planted(name, old, new), cu_path=f"planted {name}",
                    dists=())
    assert not result.ok
    assert "first difference at index" in format_report(result)


@pytest.mark.gpu
def test_cli_on_gpu_exit_codes(tmp_path, capsys):
    good = tmp_path / "vector_add.cu"
    good.write_text(render_program(build_program(parse_file(str(K / "vector_add.py")), Options()), "vector_add.py"))
    assert main(["verify", str(K / "vector_add.py"), "--device", "cuda", "--cu", str(good),
                 "--json", str(tmp_path / "r.json")]) == 0
    assert "Numba original on the GPU" in capsys.readouterr().out
    bad = tmp_path / "bad.cu"
    bad.write_text(_planted("vector_add.py", "out[i] = a[i] + b[i];", "out[i] = a[i] - b[i];"))
    assert main(["verify", str(K / "vector_add.py"), "--device", "cuda", "--cu", str(bad), "--dists", "none"]) == 1
    assert "first difference at index" in capsys.readouterr().out


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["matmul.py", "softmax.py"])
def test_sanitize_finds_no_error_in_faithful_translations(name):
    """verify --sanitize: compute-sanitizer's four tools over a few example cases, 0 errors each."""
    result = verify(K / name, device="cuda", sanitize=True, dists=(), sizes=["small"])
    report = format_report(result)
    assert result.ok, report
    for tool in ("memcheck", "racecheck", "synccheck", "initcheck"):
        assert any(n.startswith(f"compute-sanitizer {tool}: 0 errors") for n in result.notes), report


@pytest.mark.gpu
def test_a_kernel_fault_on_the_gpu_is_a_verdict_and_the_next_case_runs():
    """A write far out of bounds faults the GPU worker's CUDA context: NOT EQUIVALENT naming the CUDA error, for
    every case (a fresh worker each time), never an exception out of verify."""
    bad = _planted("vector_add.py", "out[i] = a[i] + b[i];", "out[i + (1LL << 40)] = a[i] + b[i];")
    result = verify(K / "vector_add.py", device="cuda", cu_text=bad, cu_path="faulting", dists=(),
                    sizes=["small", 1])
    assert result.verdict == "NOT EQUIVALENT" and len(result.cases) == 2
    assert all(any("illegal" in p.lower() or "cuda error" in p.lower() or "killed" in p for p in c.problems)
               for c in result.cases), format_report(result)


@pytest.mark.gpu
def test_cpu_runtime_distance_from_the_gpu_is_information():
    """--also-cpu on the lecture matmul at 97x97 (k=97 products: FMA contraction on the GPU moves the last bits of
    the CPU runtime's results): still EQUIVALENT; the distance is reported, not failed."""
    result = verify(K / "matmul.py", device="cuda", also_cpu=True, sizes=[97], dists=(), sim_max_threads=0)
    assert result.ok, format_report(result)
    assert "CPU runtime vs the GPU original (information, not a verdict)" in format_report(result)
