"""this machine -> how to compile: the CUDA toolkit, the host compiler, target architectures, and the flags
of both translation units (the kernel .cu for nvcc, the torch binding .cpp for the host compiler).

Everything taken from torch comes from its public API (``torch.utils.cpp_extension.include_paths``,
``library_paths``, ``torch._C._GLIBCXX_USE_CXX11_ABI``, ``torch.__version__``) or from a table below that
says which torch release it follows; nothing is read out of a private function or its source text.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import subprocess
import sys
import threading

from .cudahome import CudaNotFound, find_cuda_home

#: Default target when there is no GPU and neither ``arch_list`` nor TORCH_CUDA_ARCH_LIST says one.
DEFAULT_ARCH = "9.0"

#: Flags of the kernel .cu (nvcc) and of the binding .cpp (host compiler), before any caller's extras.
BASE_CUDA_FLAGS = ("-O3", "-std=c++17", "-Xcompiler", "-fPIC")
BASE_CXX_FLAGS = ("-O3", "-fPIC")

#: The C++ standard torch's headers need, by torch release: cpp_extension's default became c++20 with
#: pytorch/pytorch#176659 (torch 2.12), and torch 2.13+ headers refuse older standards (#error). The kernel
#: .cu includes no torch header, so only the binding follows this.
TORCH_CXX_STD = ((2, 12), "c++20", "c++17")  # (first release, from it on, before it)

#: Named architectures as TORCH_CUDA_ARCH_LIST spells them (torch's own table, as documented for
#: torch.utils.cpp_extension.CUDAExtension).
NAMED_ARCHS = {
    "Kepler+Tesla": "3.7", "Kepler": "3.5+PTX", "Maxwell+Tegra": "5.3", "Maxwell": "5.0;5.2+PTX",
    "Pascal": "6.0;6.1+PTX", "Volta+Tegra": "7.2", "Volta": "7.0+PTX", "Turing": "7.5+PTX",
    "Ampere+Tegra": "8.7", "Ampere": "8.0;8.6+PTX", "Ada": "8.9+PTX", "Hopper": "9.0+PTX",
    "Blackwell+Tegra": "11.0", "Blackwell": "10.0;10.3;12.0;12.1+PTX",
}

ENV_LOCK = threading.RLock()  # os.environ is changed for a moment while importing torch's builder


class BuildError(RuntimeError):
    """The extension could not be built or loaded; the message says why and where to look."""


# --------------------------------------------------------------------------- the CUDA toolkit


def cuda_home() -> str:
    """The CUDA toolkit to build with: $CUDA_HOME (or $CUDA_PATH) when it holds bin/nvcc, else the
    toolkit of the ``nvcc`` on PATH (following symlinks and one-line wrapper scripts), else
    /usr/local/cuda (cudahome.py, the search generated packages run too)."""
    return _cuda_home(os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), os.environ.get("PATH"))


@functools.lru_cache(maxsize=8)
def _cuda_home(env_home, env_path, path_var) -> str:
    try:
        return find_cuda_home(env_home or "", env_path or "", path_var or "")
    except CudaNotFound as exc:
        raise BuildError(f"numba2cuda: {exc}") from None


@functools.lru_cache(maxsize=8)
def tool_version(*cmd: str) -> str:
    try:
        out = subprocess.run(list(cmd), capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildError(f"numba2cuda: cannot run {' '.join(cmd)}: {exc}") from None
    if out.returncode != 0:
        raise BuildError(f"numba2cuda: {' '.join(cmd)} failed (exit {out.returncode}):\n{out.stdout}{out.stderr}")
    return out.stdout.strip()


def cxx() -> str:
    return os.environ.get("CXX") or "c++"


@contextlib.contextmanager
def temporary_env(**values):
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def cpp_extension():
    """torch.utils.cpp_extension, imported (only on the build path) with the right CUDA_HOME: its import
    guesses one from the nvcc on PATH (a wrapper script here) and warns when there is no GPU."""
    import logging

    if "torch.utils.cpp_extension" not in sys.modules:
        logger = logging.getLogger("torch.utils.cpp_extension")
        level = logger.level
        logger.setLevel(logging.ERROR)
        try:
            with ENV_LOCK, temporary_env(CUDA_HOME=cuda_home()):
                import torch.utils.cpp_extension  # noqa: F401
        finally:
            logger.setLevel(level)
    return sys.modules["torch.utils.cpp_extension"]


# --------------------------------------------------------------------------- architectures


def resolve_arch(arch_list: str | None) -> tuple[str, str]:
    """(arch list, note for the progress line)."""
    import torch

    if arch_list:
        return norm_arch(arch_list), ""
    env = (os.environ.get("TORCH_CUDA_ARCH_LIST") or "").strip()
    if env and env != "native":
        return norm_arch(env), ""
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        return f"{major}.{minor}", ""
    return DEFAULT_ARCH, (f"no GPU and no TORCH_CUDA_ARCH_LIST, so assuming {sm_label(DEFAULT_ARCH)}; "
                          "set TORCH_CUDA_ARCH_LIST for another GPU")


def norm_arch(text: str) -> str:
    """"9.0", "8.6+PTX", "9.0a", also "sm_90" / "90" / "compute_90"; named ones ("Hopper") stay named."""
    parts = []
    for part in (p for p in re.split(r"[;,\s]+", str(text).strip()) if p):
        m = re.fullmatch(r"(?:sm_|compute_)?(\d+)(\d)([af]?)(\+PTX)?", part, flags=re.IGNORECASE)
        if m:
            part = f"{int(m.group(1))}.{m.group(2)}{m.group(3).lower()}{'+PTX' if m.group(4) else ''}"
        parts.append(part)
    if not parts:
        raise BuildError(f"numba2cuda: empty architecture list {text!r}")
    return ";".join(parts)


def sm_label(arch: str) -> str:
    labels = []
    for part in arch.split(";"):
        m = re.fullmatch(r"(\d+)\.(\d+)([af]?)(\+PTX)?", part)
        labels.append(f"sm_{m.group(1)}{m.group(2)}{m.group(3)}{'+PTX' if m.group(4) else ''}" if m else part)
    return ", ".join(labels)


def arch_flags(arch: str) -> list[str]:
    """nvcc -gencode flags for an architecture list ("8.0;9.0+PTX", or named: "Hopper"), sorted: SASS for each,
    and PTX as well where "+PTX" asks for it."""
    flags = []
    for part in arch.split(";"):
        if part in NAMED_ARCHS:
            flags += arch_flags(NAMED_ARCHS[part])
            continue
        m = re.fullmatch(r"(\d+)\.(\d+)([af]?)(\+PTX)?", part)
        if not m:
            raise BuildError(f"numba2cuda: bad architecture {part!r} in {arch!r} (write e.g. 9.0 or 8.6+PTX, or "
                             f"one of {', '.join(NAMED_ARCHS)})")
        num = m.group(1) + m.group(2) + m.group(3)
        flags.append(f"-gencode=arch=compute_{num},code=sm_{num}")
        if m.group(4):
            flags.append(f"-gencode=arch=compute_{num},code=compute_{num}")
    return sorted(set(flags))


# --------------------------------------------------------------------------- torch's side of the binding


def torch_cxx_std(version: str | None = None) -> str:
    """The -std= of the binding .cpp for this torch (TORCH_CXX_STD)."""
    if version is None:
        import torch

        version = torch.__version__
    first, newer, older = TORCH_CXX_STD
    m = re.match(r"(\d+)\.(\d+)", version)
    return newer if m is None or (int(m.group(1)), int(m.group(2))) >= first else older


def binding_flags(home: str) -> list[str]:
    """Include paths, the libstdc++ ABI and the C++ standard of a .cpp that includes <torch/extension.h>."""
    import sysconfig

    import torch

    flags = []
    for path in [*cpp_extension().include_paths(), os.path.join(home, "include"),
                 sysconfig.get_path("include", scheme="posix_prefix")]:
        flags += ["-isystem", path]
    if hasattr(torch._C, "_GLIBCXX_USE_CXX11_ABI"):
        flags.append(f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}")
    return [*flags, f"-std={torch_cxx_std()}"]


def link_flags(home: str) -> list[str]:
    """What the extension links against: torch's libraries (cpp_extension.library_paths) and the CUDA runtime."""
    cuda_lib = os.path.join(home, "lib64")
    if not os.path.isdir(cuda_lib) and os.path.isdir(os.path.join(home, "lib")):
        cuda_lib = os.path.join(home, "lib")
    torch_libs = [f"-L{p}" for p in cpp_extension().library_paths()]
    return [*torch_libs, "-lc10", "-lc10_cuda", "-ltorch_cpu", "-ltorch_cuda", "-ltorch", "-ltorch_python",
            f"-L{cuda_lib}", "-lcudart"]
