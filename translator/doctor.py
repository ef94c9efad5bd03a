"""this machine -> what numba2cuda can do on it: each tool and package it needs, found or not, with the fix.

`numba2cuda doctor` prints the report (`--json` for a machine); the test suite's conftest reuses the cheap probes
(`tool_checks`) to skip, with the same reason, the tests that need a tool this machine lacks. Nothing here
prints a secret: the LLM endpoint is shown without credentials and the API key only as set or not.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import extras
from .errors import EXIT_OK
from .sandbox import scrubbed_env
from .version import __version__


@dataclass
class Check:
    name: str
    ok: bool | None  # None: information, nothing to fix
    detail: str
    fix: str = ""
    data: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- tools (cheap: the test suite probes these)


def _which(command: str) -> str | None:
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    return shutil.which(words[0]) if words else None


def _first_line(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if out.returncode == 0 and text else None


def probe_cpu_compiler() -> Check:
    """The compiler of the CPU runtime (verify --device cpu): $CXX, else g++."""
    name = os.environ.get("CXX") or "g++"
    path = _which(name)
    line = _first_line([path, "--version"]) if path else None
    if line is None:
        return Check("g++", False, (f"{name} not found on PATH" if path is None else f"{path} does not run")
                     + " (the CPU runtime of verify --device cpu compiles the translation with it)",
                     "install g++ (Debian/Ubuntu: apt-get install g++, conda: conda install gxx) or set CXX")
    return Check("g++", True, f"{path}: {line}", data={"path": path, "version": line})


def probe_host_compiler() -> Check:
    """The host compiler of builds (the torch binding, and nvcc's host side): $CXX, else c++."""
    name = os.environ.get("CXX") or "c++"
    path = _which(name)
    line = _first_line([path, "--version"]) if path else None
    if line is None:
        return Check("c++", False, (f"{name} not found on PATH" if path is None else f"{path} does not run")
                     + " (builds of the torch extension need it: build, load, verify --device cuda, package --wheel)",
                     "install a C++ compiler (Debian/Ubuntu: apt-get install g++) or set CXX")
    return Check("c++", True, f"{path}: {line}", data={"path": path, "version": line})


def probe_nvcc() -> Check:
    """The CUDA toolkit builds use: $CUDA_HOME, else the nvcc on PATH (through wrapper scripts), else
    /usr/local/cuda (build/toolchain.py's discovery)."""
    from .build.cudahome import nvcc_behind_wrapper
    from .build.toolchain import BuildError, cuda_home

    try:
        home = cuda_home()
    except BuildError:
        home = None
    nvcc = os.path.join(home, "bin", "nvcc") if home else None
    line = None
    if nvcc and os.access(nvcc, os.X_OK):
        try:
            out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60,
                                 stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired):
            out = None
        if out is not None and out.returncode == 0:
            line = next((ln for ln in out.stdout.splitlines() if "release" in ln), None)
    env_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if line is None:
        bad = f"; $CUDA_HOME={env_home} has no bin/nvcc" if env_home else ""
        return Check("nvcc", False, f"no CUDA toolkit found (no nvcc on PATH, in $CUDA_HOME or /usr/local/cuda{bad}; "
                     "builds need it, translate and verify --device cpu do not)",
                     "install the CUDA toolkit (https://developer.nvidia.com/cuda-downloads, or conda install "
                     "cuda-nvcc) and put its bin/ on PATH or set CUDA_HOME to it")
    on_path = shutil.which("nvcc")
    how = ("$CUDA_HOME" if env_home and os.path.abspath(env_home) == home else
           f"nvcc on PATH ({on_path}{', a wrapper script' if on_path and nvcc_behind_wrapper(on_path) else ''})"
           if on_path else "the default /usr/local/cuda")
    release = line.split("release", 1)[1].strip().rstrip(",").split(",")[0].strip()
    return Check("nvcc", True, f"CUDA {release} at {home} (found through {how})",
                 data={"cuda_home": home, "nvcc": nvcc, "release": release, "found_through": how})


@functools.lru_cache(maxsize=None)
def tool_checks() -> dict[str, Check]:
    """{"g++", "c++", "nvcc": Check}: what tests and commands that compile need; probed once per process."""
    return {"g++": probe_cpu_compiler(), "c++": probe_host_compiler(), "nvcc": probe_nvcc()}


# --------------------------------------------------------------------------- packages, GPU, simulator


def probe_python() -> Check:
    return Check("python", True, f"{platform.python_version()} ({sys.executable})",
                 data={"version": platform.python_version(), "executable": sys.executable})


def probe_extras() -> list[Check]:
    checks = []
    for extra, needed in extras.EXTRAS.items():
        have = {dist: extras.version(dist) for _, dist in needed}
        optional = {dist: extras.version(dist) for _, dist, _ in extras.OPTIONAL.get(extra, [])}
        absent = extras.missing(extra)
        shown = ", ".join(f"{d} {v}" if v else f"{d} missing" for d, v in {**have, **optional}.items())
        checks.append(Check(f"[{extra}]", not absent, shown,
                            f"pip install 'numba2cuda[{extra}]'" if absent else "",
                            data={"required": have, "optional": optional}))
    return checks


def probe_torch() -> Check:
    if not extras.installed("torch"):
        return Check("torch", False, "not installed", "pip install 'numba2cuda[build]'")
    try:
        import torch
    except Exception as exc:  # a broken install says why here instead of in every command
        return Check("torch", False, f"does not import: {type(exc).__name__}: {exc}", "reinstall torch")
    cuda = torch.version.cuda
    if not cuda:
        return Check("torch", False, f"{torch.__version__}, a CPU-only build: it cannot build CUDA extensions",
                     "install a CUDA build of torch (https://pytorch.org/get-started/locally/)",
                     data={"version": torch.__version__, "cuda": None})
    return Check("torch", True, f"{torch.__version__} (CUDA {cuda})", data={"version": torch.__version__, "cuda": cuda})


def probe_gpu(torch_ok: bool) -> Check:
    """The GPUs and their compute capability: from torch when it imports, else nvidia-smi."""
    gpus = []
    if torch_ok:
        import torch

        if torch.cuda.is_available():
            for i in range(torch.cuda.device_count()):
                major, minor = torch.cuda.get_device_capability(i)
                gpus.append({"index": i, "name": torch.cuda.get_device_name(i), "capability": f"{major}.{minor}"})
    elif shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=index,name,compute_cap", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.TimeoutExpired):
            out = ""
        for row in out.strip().splitlines():
            parts = [p.strip() for p in row.split(",")]
            if len(parts) == 3:
                gpus.append({"index": int(parts[0]), "name": parts[1], "capability": parts[2]})
    if not gpus:
        return Check("GPU", False, "no CUDA GPU visible" + ("" if torch_ok else " (torch not importable; nvidia-smi "
                                                           "found none)") + "; translate and verify --device cpu need "
                     "none", "run bench, verify --device cuda and loaded kernels on a machine with an NVIDIA GPU",
                     data={"gpus": []})
    text = "; ".join(f"{g['index']}: {g['name']} (compute capability {g['capability']}, "
                     f"sm_{g['capability'].replace('.', '')})" for g in gpus)
    return Check("GPU", True, text, data={"gpus": gpus})


SIMULATOR_PROBE = """
import numpy as np
from numba import cuda
@cuda.jit
def twice(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= 2
a = np.arange(8, dtype=np.float32)
twice[2, 4](a)
assert a.tolist() == [2.0 * k for k in range(8)], a
import numba_cuda
print(getattr(numba_cuda, "__version__", "?"))
"""


def probe_simulator() -> Check:
    """numba-cuda, and whether its CUDA simulator runs a kernel (the reference of verify --device cpu)."""
    if extras.missing("verify"):
        return Check("simulator", False, "numba / numba-cuda not installed", "pip install 'numba2cuda[verify]'")
    t0 = time.monotonic()
    env = dict(scrubbed_env(), NUMBA_ENABLE_CUDASIM="1")
    try:
        out = subprocess.run([sys.executable, "-c", SIMULATOR_PROBE], capture_output=True, text=True, timeout=180,
                             env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return Check("simulator", False, "a 8-thread kernel did not finish in 180 s in Numba's CUDA simulator",
                     "check the numba / numba-cuda install (pip install 'numba2cuda[verify]')")
    seconds = time.monotonic() - t0
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["no output"])[-1]
        return Check("simulator", False, f"Numba's CUDA simulator fails a tiny kernel: {last}",
                     "reinstall the pinned versions: pip install 'numba2cuda[verify]'")
    return Check("simulator", True, f"numba {extras.version('numba')}, numba-cuda {extras.version('numba-cuda')}: "
                                    f"the CUDA simulator runs a kernel ({seconds:.1f} s)", data={"seconds": round(seconds, 2)})


def _tree_size(root: Path) -> tuple[int, int]:
    total = files = 0
    for folder, _, names in os.walk(root):
        for name in names:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
                files += 1
            except OSError:
                pass
    return total, files


def probe_cache() -> Check:
    from .build.plan import cache_root

    root = cache_root()
    where = "$NUMBA2CUDA_CACHE" if os.environ.get("NUMBA2CUDA_CACHE") else "default; NUMBA2CUDA_CACHE moves it"
    if not root.exists():
        return Check("cache", None, f"{root} ({where}): empty", data={"path": str(root), "bytes": 0})
    size, files = _tree_size(root)
    parts = {}
    for sub in ("torch-ext", "cpu", "llm"):
        if (root / sub).is_dir():
            parts[sub] = sum(1 for p in (root / sub).iterdir() if p.is_dir() and not p.name.startswith("."))
    counts = ", ".join(f"{n} in {sub}/" for sub, n in parts.items())
    writable = os.access(root, os.W_OK)
    return Check("cache", writable or None, f"{root} ({where}): {size / 2**20:.1f} MiB in {files} files"
                 + (f" ({counts})" if counts else "") + ("" if writable else "; NOT writable"),
                 "" if writable else "set NUMBA2CUDA_CACHE to a writable folder",
                 data={"path": str(root), "bytes": size, "files": files, **parts})


def probe_llm() -> Check:
    from .errors import UserError
    from .llm.config import settings_from

    try:
        settings = settings_from(argparse.Namespace(), str(Path.cwd() / "pyproject.toml"))
    except UserError as exc:
        return Check("LLM", False, exc.text.splitlines()[0], "fix the setting named above")
    key = "set" if settings.api_key else "not set"
    client = extras.version("openai")
    if not settings.configured:
        return Check("LLM", None, f"not configured (the rules translate; the model is only for what they reject); "
                                  f"openai {client or 'not installed'}",
                     data={"configured": False, "openai": client})
    data = {"configured": True, "model": settings.model, "base_url": settings.where(), "api_key": key,
            "openai": client, "from": dict(settings.sources)}
    detail = f"model {settings.model} at {settings.where()}; OPENAI_API_KEY {key}; openai {client or 'not installed'}"
    return Check("LLM", bool(client), detail, "" if client else "pip install 'numba2cuda[llm]'", data=data)


def probe_settings() -> Check:
    """Misspelt NUMBA2CUDA_* variables and [tool.numba2cuda] keys of the pyproject.toml here."""
    from .settings import unknown_environment, unknown_pyproject_keys

    problems = unknown_environment() + unknown_pyproject_keys(Path.cwd())
    if problems:
        return Check("settings", False, "; ".join(problems), "rename or remove them", data={"warnings": problems})
    return Check("settings", None, "no unknown NUMBA2CUDA_* variable or [tool.numba2cuda] key", data={"warnings": []})


# --------------------------------------------------------------------------- the report


def run_checks() -> list[Check]:
    checks = [probe_python(), Check("numba2cuda", True, f"{__version__} ({Path(__file__).resolve().parent})",
                                    data={"version": __version__})]
    checks += probe_extras()
    torch_check = probe_torch()
    checks += [torch_check, *tool_checks().values(), probe_gpu(bool(torch_check.ok)), probe_simulator(),
               probe_cache(), probe_llm(), probe_settings()]
    return checks


def capabilities(checks: list[Check]) -> dict[str, bool]:
    """What each command can do here, from the checks."""
    ok = {c.name: bool(c.ok) for c in checks}
    build = ok["[build]"] and ok["torch"] and ok["nvcc"] and ok["c++"]
    return {
        "translate": True,
        "verify --device cpu": ok["[verify]"] and ok["g++"] and ok["simulator"],
        "build / numba2cuda.load (compile)": build,
        "run loaded kernels, verify --device cuda": build and ok["GPU"] and ok["[verify]"],
        "bench": build and ok["GPU"] and ok["[bench]"],
        "package (project)": True,
        "package --wheel": build,
        "LLM backend": ok["[llm]"] and ok["LLM"],
    }


def format_report(checks: list[Check], can: dict[str, bool]) -> str:
    width = max(len(c.name) for c in checks)
    mark = {True: "ok  ", False: "MISS", None: "    "}
    lines = [f"numba2cuda doctor: this machine ({platform.system()} {platform.machine()})", ""]
    for c in checks:
        lines.append(f"  {mark[c.ok]}  {c.name.ljust(width)}  {c.detail}")
        if c.ok is False and c.fix:
            lines.append(f"        {' ' * width}  fix: {c.fix}")
    lines += ["", "what works here:"]
    lines += [f"  {'yes' if v else 'no '}  {k}" for k, v in can.items()]
    return "\n".join(lines)


def add_parser(sub) -> None:
    d = sub.add_parser("doctor", help="report what this machine can do (tools, packages, GPU) and how to fix "
                                      "what is missing",
                       description="Check Python, numba2cuda's extras, torch and its CUDA, the CUDA toolkit (nvcc), "
                                   "the C++ compilers, the GPU, Numba's CUDA simulator, the cache and the LLM "
                                   "endpoint; print what works and the fix for what does not. Secrets are never "
                                   "printed.")
    d.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    d.set_defaults(func=cmd_doctor)


def cmd_doctor(args) -> int:
    checks = run_checks()
    can = capabilities(checks)
    if args.json:
        doc = {"numba2cuda": __version__, "checks": [asdict(c) for c in checks], "can": can}
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
    else:
        print(format_report(checks, can))
    return EXIT_OK
