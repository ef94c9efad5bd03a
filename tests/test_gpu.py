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
        for o in c.cpu_outputs:
            assert o.report.ok, report
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
