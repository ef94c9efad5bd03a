"""The drop-in object: built through torch's extension machinery (no GPU needed to build and import), launch
configurations parsed like Numba's, and bad arguments rejected with the argument's name. Launch tests that
need a GPU are marked gpu."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from translator.runtime.launch import CURRENT_STREAM, stream_handle  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MATMUL = ROOT / "kernels" / "matmul.py"


@pytest.fixture(scope="module")
def matmul():
    import numba2cuda

    return numba2cuda.load(MATMUL, progress=False)


@pytest.mark.needs("nvcc")
def test_builds_and_exposes_the_kernel(matmul):
    assert list(matmul.kernels) == ["matmul_k_numba"]
    assert "template <int TW>" in matmul.cu and "#include <torch/extension.h>" not in matmul.cu
    assert "#include <torch/csrc/utils/pybind.h>" in matmul.cpp


@pytest.mark.needs("nvcc")
def test_launch_configuration_like_numba(matmul):
    k = matmul.matmul_k_numba
    assert k[4, 16].config == (4, 1, 1, 16, 1, 1, CURRENT_STREAM, 0)
    assert k[(4, 5), (16, 16), 0, 2048].config == (4, 5, 1, 16, 16, 1, 0, 2048)
    assert k[(4, 5, 6), (8, 8, 2), 7].config == (4, 5, 6, 8, 8, 2, 7, 0)
    with pytest.raises(ValueError, match="grid"):
        k[(0, 1), 16]
    with pytest.raises(ValueError, match="1, 2 or 3 integers"):
        k[(1, 1, 1, 1), 16]
    with pytest.raises(ValueError, match="launch as"):
        k[4]
    with pytest.raises(ValueError, match="shared memory"):
        k[1, 1, 0, -4]


def test_streams_from_every_library():
    class TorchLike:
        cuda_stream = 1234

    class CupyLike:
        ptr = 99

    class Handle:
        value = 77

    class NumbaLike:
        handle = Handle()

    assert stream_handle(None) == CURRENT_STREAM
    assert stream_handle(0) == 0
    assert stream_handle(TorchLike()) == 1234
    assert stream_handle(CupyLike()) == 99
    assert stream_handle(NumbaLike()) == 77


@pytest.mark.needs("nvcc")
def test_argument_errors_name_the_argument(matmul):
    """Type problems of every argument before the device: tests/test_launch.py has one test per mistake."""
    k = matmul.matmul_k_numba[(1, 1), (8, 8), 0, 512]
    m = torch.zeros(8, 8)
    with pytest.raises(TypeError, match=r"takes 4 arguments \(3 given\)"):
        k(m, m, m)
    with pytest.raises(TypeError, match=r"argument 'n' must be array\(float32, 2d, C\), got array\(float64, 2d, C\)"):
        k(m, m.double(), m, 8)
    with pytest.raises(TypeError, match=r"argument 'out' must be array\(float32, 2d, C\), got array\(float32, 1d, C\)"):
        k(m, m, torch.zeros(64), 8)
    with pytest.raises(TypeError, match="argument 'm' must be .* not C-contiguous"):
        k(m.t(), m, m, 8)
    with pytest.raises(TypeError, match="argument 'm' must be on a CUDA device"):
        k(m, m, m, 8)
    with pytest.raises(TypeError, match="argument 'm' must be .* not C-contiguous"):
        k(np.zeros((8, 8), np.float32).T, m, m, 8)
    with pytest.raises(TypeError, match="argument 'n' must be array"):
        k(m, [[0.0]], m, 8)


@pytest.mark.needs("nvcc")
def test_warm_load_does_not_rebuild(matmul):
    """A second process loads the published build: no compiler runs and no file of the cache changes. (Its time is
    not asserted: on a loaded CI machine it is dominated by importing torch; BENCHMARKS.md has the H200 figure.)"""
    build_dir = Path(matmul.extension.__file__).parent  # other workers may build elsewhere in the cache meanwhile

    def snapshot():
        return {str(p): p.stat().st_mtime_ns for p in build_dir.rglob("*") if p.is_file() and p.suffix != ".lock"}

    before = snapshot()
    code = "import sys, numba2cuda; m = numba2cuda.load(sys.argv[1]); print(m.extension.__file__)"
    proc = subprocess.run([sys.executable, "-c", code, str(MATMUL)], capture_output=True, text=True, cwd=ROOT,
                          env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == matmul.extension.__file__  # the same published build, not a new one
    assert "building" not in proc.stderr
    assert snapshot() == before


@pytest.mark.gpu
@pytest.mark.needs("nvcc")
def test_every_specialisation_matches_numba_on_the_gpu(matmul):
    from numba import cuda

    sys.path.insert(0, str(ROOT / "tests"))
    from corpus_harness import load_module

    numba_k = load_module(str(MATMUL)).matmul_k_numba
    gen = torch.Generator(device="cuda").manual_seed(1)
    m = torch.randn(67, 97, device="cuda", generator=gen)
    n = torch.randn(97, 33, device="cuda", generator=gen)
    for tw in (8, 16, 32, 5, 12):
        cfg = ((33 + tw - 1) // tw, (67 + tw - 1) // tw), (tw, tw), 0, 2 * tw * tw * 4
        ref = torch.full((67, 33), float("nan"), device="cuda")
        out = torch.full((67, 33), float("nan"), device="cuda")
        numba_k[cfg](cuda.as_cuda_array(m), cuda.as_cuda_array(n), cuda.as_cuda_array(ref), tw)
        matmul.matmul_k_numba[cfg](m, n, out, tw)
        torch.cuda.synchronize()
        assert torch.equal(out, ref), f"tw={tw}"
