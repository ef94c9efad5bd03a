"""Every corpus translation compiles on its own with nvcc for sm_80 and sm_90, with no warnings at all."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from translator import translate_file
from corpus_harness import LLM_ONLY

ROOT = Path(__file__).resolve().parent.parent
# LLM_ONLY: the LLM backend's corpus (tests/test_llm.py), not translated by the rules
CORPUS = sorted(p for p in (ROOT / "kernels").glob("*.py") if p.stem not in LLM_ONLY)
NVCC = shutil.which("nvcc")

pytestmark = pytest.mark.skipif(NVCC is None and not os.environ.get("CI"), reason="nvcc is not installed")


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_compiles_warning_free(path, tmp_path):
    assert NVCC, "CI must have nvcc: the CUDA toolkit is part of the machine image"
    cu = tmp_path / f"{path.stem}.cu"
    cu.write_text(translate_file(path))
    cmd = [NVCC, "-c", str(cu), "-o", str(tmp_path / "k.o"),
           "-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90",
           "-Werror", "all-warnings", "-Xcompiler", "-Wall,-Wextra"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"nvcc failed on {path.name}:\n{proc.stderr}\n{cu.read_text()}"
    assert "warning" not in (proc.stderr + proc.stdout).lower(), proc.stderr
