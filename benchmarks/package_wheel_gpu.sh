#!/usr/bin/env bash
# Issue 6 on a GPU machine: build the lecture matmul's wheel, install it into a clean virtual environment
# (no numba2cuda, no libcst; torch and numba from the system), launch it with the lecture's Numba launch
# code and compare with the Numba original bit for bit.
#   bash benchmarks/package_wheel_gpu.sh OUTDIR      (repository root; numba2cuda importable here)
set -euo pipefail
out=${1:-/tmp/n2c-package}
rm -rf "$out" && mkdir -p "$out"
set -x
python3 -m translator.cli package kernels/matmul.py -o "$out/matmul_pkg" --arch "9.0" --wheel
ls -l "$out"/matmul_pkg/dist/
python3 -m venv "$out/venv"
# torch and numba as the system has them (here a venv of their own), nothing else: no numba2cuda, no libcst
python3 -c "import torch, site, os; print(os.path.dirname(os.path.dirname(torch.__file__)))" \
    > "$out/venv/lib/python3.12/site-packages/system_torch_numba.pth"
env -u PYTHONPATH "$out/venv/bin/python" -m pip install -q --no-index --no-deps .whl/numpy-2.4*.whl   # numba-cuda 0.30.4 needs numpy < 2.5
env -u PYTHONPATH "$out/venv/bin/python" -m pip install -q --no-index --no-deps "$out"/matmul_pkg/dist/*.whl
cp kernels/matmul.py "$out/user_matmul.py"    # the user's own module, as they wrote it
cd "$out"
env -u PYTHONPATH "$out/venv/bin/python" - <<'PY'
import importlib.util, math, sys
import numpy as np
for banned in ("numba2cuda", "translator", "libcst"):
    assert importlib.util.find_spec(banned) is None, f"{banned} is importable in the clean environment"
import matmul_cuda                       # the installed wheel
from user_matmul import matmul_k_numba   # the user's Numba original
print("imported", matmul_cuda.__file__, "| numba2cuda importable:", importlib.util.find_spec("numba2cuda") is not None)
rng = np.random.default_rng(0)
m = rng.standard_normal((5120, 256)).astype(np.float32)
n = rng.standard_normal((256, 5120)).astype(np.float32)
for tw in (16, 32, 12):
    blocks = (math.ceil(5120 / tw), math.ceil(5120 / tw))
    want = np.zeros((5120, 5120), np.float32); got = np.zeros((5120, 5120), np.float32)
    matmul_k_numba[blocks, (tw, tw), 0, tw * tw * 2 * 4](m, n, want, tw)          # the lecture's launch line
    matmul_cuda.matmul_k_numba[blocks, (tw, tw), 0, tw * tw * 2 * 4](m, n, got, tw)  # the same line, packaged
    same = np.array_equal(want.view(np.uint32), got.view(np.uint32))
    print(f"tw={tw}: packaged == Numba bit for bit: {same}; max |diff| {np.abs(want - got).max()}")
    assert same
print("modules loaded from numba2cuda/translator/libcst:", sorted(k for k in sys.modules if k.split('.')[0] in ("numba2cuda", "translator", "libcst")))
PY
