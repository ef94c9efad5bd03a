"""Every corpus translation compiles on its own with nvcc for sm_80 and sm_90, with no warnings at all."""

import subprocess
from pathlib import Path

import pytest

from translator import translate_file
from translator.doctor import tool_checks
from corpus_harness import LLM_ONLY

ROOT = Path(__file__).resolve().parent.parent
# LLM_ONLY: the LLM backend's corpus (tests/test_llm.py), not translated by the rules
CORPUS = sorted(p for p in (ROOT / "kernels").glob("*.py") if p.stem not in LLM_ONLY)
NVCC = tool_checks()["nvcc"].data.get("nvcc")  # the one numba2cuda builds with (PATH, CUDA_HOME, /usr/local/cuda)

pytestmark = pytest.mark.needs("nvcc")


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_compiles_warning_free(path, tmp_path):
    cu = tmp_path / f"{path.stem}.cu"
    cu.write_text(translate_file(path))
    cmd = [NVCC, "-c", str(cu), "-o", str(tmp_path / "k.o"),
           "-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90",
           "-Werror", "all-warnings", "-Xcompiler", "-Wall,-Wextra"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"nvcc failed on {path.name}:\n{proc.stderr}\n{cu.read_text()}"
    assert "warning" not in (proc.stderr + proc.stdout).lower(), proc.stderr
