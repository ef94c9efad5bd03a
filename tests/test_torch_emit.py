"""`translate --emit torch`: one Python file holding the kernel .cu, the binding .cpp, numba2cuda's launch logic and a
torch.utils.cpp_extension.load_inline call, that needs torch alone and launches like Numba."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from translator.cli import main
from translator.runtime.dropin import sources

ROOT = Path(__file__).resolve().parents[1]
MATMUL = ROOT / "kernels" / "matmul.py"


@pytest.fixture(scope="module")
def torch_file(tmp_path_factory):
    out = tmp_path_factory.mktemp("emit") / "matmul_torch.py"
    assert main(["translate", str(MATMUL), "--emit", "torch", "-o", str(out)]) == 0
    return out


def constant(tree: ast.Module, name: str):
    node = next(n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == name)
    return ast.literal_eval(node.value)


def test_the_file_holds_the_very_sources_and_imports_only_torch(torch_file, tmp_path):
    text = torch_file.read_text()
    tree = ast.parse(text)
    _, cu, cpp = sources(str(MATMUL))
    assert constant(tree, "CUDA_SOURCE") == cu  # what `translate` writes
    assert constant(tree, "CPP_SOURCE") == cpp  # what numba2cuda.load builds
    top = {a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    top |= {n.module for n in tree.body if isinstance(n, ast.ImportFrom)}
    assert top == {"hashlib", "os", "re", "shutil", "torch", "torch.utils.cpp_extension"}
    lazy = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names} - top
    assert lazy == {"numpy"}  # only when a NumPy array is passed, as in Numba
    launch = (ROOT / "translator" / "runtime" / "launch.py").read_text()
    assert launch[launch.index("import torch"):] in text  # the launch logic, verbatim
    search = (ROOT / "translator" / "build" / "cudahome.py").read_text()
    assert search[search.index("import os"):] in text  # the toolkit search, verbatim
    assert main(["translate", str(MATMUL), "--emit", "torch", "-o", str(tmp_path / "again.py")]) == 0
    assert (tmp_path / "again.py").read_text() == text  # deterministic


def test_importing_it_calls_load_inline_and_kernels_launch_like_numba(torch_file, monkeypatch, tmp_path):
    """With load_inline stood in for (no compiler here), the module passes both sources and exposes each kernel
    with Numba's launch syntax, down to the binding's argument order."""
    import torch
    import torch.utils.cpp_extension as cpp_extension

    seen, calls = {}, []

    def fake_load_inline(**kwargs):
        seen.update(kwargs)
        return types.SimpleNamespace(matmul_k_numba=lambda *a: calls.append(a))

    monkeypatch.setattr(cpp_extension, "load_inline", fake_load_inline)
    monkeypatch.setattr(cpp_extension, "CUDA_HOME", cpp_extension.CUDA_HOME)  # the file sets both: restore after
    toolkit = tmp_path / "cuda-x"  # a toolkit where CUDA_HOME says, whatever this machine has
    (toolkit / "bin").mkdir(parents=True)
    (toolkit / "bin" / "nvcc").write_text("#!/bin/sh\n")
    (toolkit / "bin" / "nvcc").chmod(0o755)
    monkeypatch.setenv("CUDA_HOME", str(toolkit))
    namespace = {"__name__": "matmul_torch"}
    exec(compile(torch_file.read_text(), str(torch_file), "exec"), namespace)
    _, cu, cpp = sources(str(MATMUL))
    assert seen["cuda_sources"] == [cu] and seen["cpp_sources"] == [cpp]
    assert seen["name"].startswith("matmul_torch_") and seen.get("functions") is None
    assert cpp_extension.CUDA_HOME == str(toolkit) == os.environ["CUDA_HOME"]  # numba2cuda's search, not torch's
    k = namespace["matmul_k_numba"]
    t = torch.zeros(2, 2)
    k[(2, 3), (16, 16), 0, 2048](t, t, t, 16)
    assert calls == [(2, 3, 1, 16, 16, 1, 0, 2048, t, t, t, 16)]
    with pytest.raises(TypeError, match="takes 4 arguments"):
        k[1, 1](t, t)


BUILD_AND_RUN = """
import json, sys
class Block:  # the file must need torch alone
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"numba2cuda", "translator", "numba", "libcst"}:
            raise ImportError("blocked import of " + name)
sys.meta_path.insert(0, Block())
sys.path = [sys.argv[1]] + [p for p in sys.path if p not in ("", ".")]
import torch
import matmul_torch
gen = torch.Generator(device="cuda").manual_seed(1)
m = torch.randn(67, 97, device="cuda", generator=gen)
n = torch.randn(97, 33, device="cuda", generator=gen)
outs = {}
for tw in (8, 16, 32, 5, 12):
    out = torch.full((67, 33), float("nan"), device="cuda")
    matmul_torch.matmul_k_numba[((33 + tw - 1) // tw, (67 + tw - 1) // tw), (tw, tw), 0, 2 * tw * tw * 4](m, n, out, tw)
    torch.cuda.synchronize()
    outs[tw] = out.cpu().numpy().view("uint32").tolist()
print(json.dumps(outs))
"""


@pytest.mark.gpu
@pytest.mark.needs("nvcc")
def test_built_with_load_inline_it_is_bit_identical_to_the_dropin(torch_file, tmp_path):
    """On a GPU: the file builds with load_inline in a process where numba2cuda, Numba and libcst cannot be
    imported, and every specialisation and the generic kernel give the drop-in's bits."""
    import numpy as np
    import torch

    import numba2cuda

    env = {**os.environ, "TORCH_EXTENSIONS_DIR": str(tmp_path / "torch-ext")}
    proc = subprocess.run([sys.executable, "-c", BUILD_AND_RUN, str(torch_file.parent)], capture_output=True,
                          text=True, env=env, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    dropin = numba2cuda.load(MATMUL, progress=False)
    gen = torch.Generator(device="cuda").manual_seed(1)
    m = torch.randn(67, 97, device="cuda", generator=gen)
    n = torch.randn(97, 33, device="cuda", generator=gen)
    for tw in (8, 16, 32, 5, 12):
        out = torch.full((67, 33), float("nan"), device="cuda")
        dropin.matmul_k_numba[((33 + tw - 1) // tw, (67 + tw - 1) // tw), (tw, tw), 0, 2 * tw * tw * 4](m, n, out, tw)
        torch.cuda.synchronize()
        assert np.array_equal(np.asarray(got[str(tw)], dtype=np.uint32), out.cpu().numpy().view(np.uint32)), tw
