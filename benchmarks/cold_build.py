"""Cold build of one module, side by side: numba2cuda's own build and torch's load_inline.

    python3 benchmarks/cold_build.py [kernels/matmul.py] [--repeat 2]

- numba2cuda: `numba2cuda.load(FILE)` with an empty NUMBA2CUDA_CACHE: ninja compiles the kernel .cu (no torch
  header) with nvcc and the binding .cpp (only at::Tensor and pybind11) with the host compiler, in parallel, then
  links; the result is published in the content-addressed cache.
- load_inline: the file `numba2cuda translate FILE --emit torch` writes, imported with an empty
  TORCH_EXTENSIONS_DIR: torch's load_inline prepends torch's headers to both sources (torch/types.h to the .cu,
  torch/extension.h to the .cpp) and builds them with ninja too.

Each build runs in a fresh process (the seconds count from after `import torch`), for the same architectures
(TORCH_CUDA_ARCH_LIST, else the GPU's, else 9.0). Needs torch, nvcc and a C++ compiler; a GPU is optional.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

NUMBA2CUDA = """
import json, sys, time
import torch
t0 = time.perf_counter()
from translator.runtime.dropin import load
module = load(sys.argv[1], progress=False)
print(json.dumps({"seconds": time.perf_counter() - t0, "file": module.extension.__file__}))
"""

LOAD_INLINE = """
import importlib, json, sys, time
import torch, torch.utils.cpp_extension
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
module = importlib.import_module(sys.argv[2])
print(json.dumps({"seconds": time.perf_counter() - t0, "file": module._extension.__file__}))
"""


def arch_list() -> str:
    if os.environ.get("TORCH_CUDA_ARCH_LIST"):
        return os.environ["TORCH_CUDA_ARCH_LIST"]
    import torch

    if torch.cuda.is_available():
        return "{}.{}".format(*torch.cuda.get_device_capability())
    return "9.0"


def timed(code: str, args: list[str], env: dict) -> float:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=ROOT)
    if proc.returncode != 0:
        sys.exit(f"build failed:\n{proc.stdout}\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])["seconds"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file", nargs="?", default=str(ROOT / "kernels" / "matmul.py"))
    p.add_argument("--repeat", type=int, default=2, help="cold builds of each kind (default 2)")
    args = p.parse_args(argv)
    arch = arch_list()
    results = {"numba2cuda (ninja, kernel .cu without torch headers)": [], "torch load_inline (--emit torch)": []}
    with tempfile.TemporaryDirectory(prefix="n2c-cold-build-") as tmp:
        tmp = Path(tmp)
        module = subprocess.run([sys.executable, "-m", "translator", "translate", args.file, "--emit", "torch", "-o",
                                 str(tmp / "cold_torch.py")], capture_output=True, text=True, cwd=ROOT)
        if module.returncode != 0:
            sys.exit(module.stderr)
        base = {**os.environ, "TORCH_CUDA_ARCH_LIST": arch, "PYTHONPATH": str(ROOT)}
        for n in range(args.repeat):
            results["numba2cuda (ninja, kernel .cu without torch headers)"].append(
                timed(NUMBA2CUDA, [args.file], {**base, "NUMBA2CUDA_CACHE": str(tmp / f"n2c-{n}")}))
            results["torch load_inline (--emit torch)"].append(
                timed(LOAD_INLINE, [str(tmp), "cold_torch"], {**base, "TORCH_EXTENSIONS_DIR": str(tmp / f"ti-{n}")}))
    import torch

    nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    print(f"cold build of {Path(args.file).name} for {arch} on {platform.node()}: {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}, torch {torch.__version__}, {nvcc[-1] if nvcc else 'nvcc ?'}")
    for name, seconds in results.items():
        print(f"  {name:55s} median {statistics.median(seconds):6.1f} s   runs: "
              + ", ".join(f"{s:.1f}" for s in seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
