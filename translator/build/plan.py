"""(name, sources, flags, toolchain) -> BuildPlan: the cache key, the directory, the lock and the module name
of one build, computed without compiling anything."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from .toolchain import BASE_CUDA_FLAGS, BASE_CXX_FLAGS, cuda_home, cxx, resolve_arch, tool_version

#: Bump when the layout, the flag set or anything else that changes the produced .so changes.
BUILD_FORMAT = 1


def cache_root(cache_dir=None) -> Path:
    """The numba2cuda cache: ``cache_dir``, else $NUMBA2CUDA_CACHE, else ~/.cache/numba2cuda.
    Extensions live in its ``torch-ext`` subfolder."""
    root = cache_dir or os.environ.get("NUMBA2CUDA_CACHE") or os.path.join("~", ".cache", "numba2cuda")
    return Path(os.path.abspath(os.path.expanduser(str(root))))


@dataclass(frozen=True)
class BuildPlan:
    """Where and how one (name, sources, flags, toolchain) builds; computed without compiling."""

    name: str  # as given, made an identifier
    key: str  # sha256 hex
    module_name: str  # n2c_<name>_<key[:12]>
    directory: Path  # the published build
    lock_file: Path
    arch_list: str  # "9.0" or "8.0;9.0+PTX"
    arch_note: str  # why this arch, when it is a guess
    cuda_home: str
    extra_cuda_cflags: tuple
    extra_cflags: tuple
    cuda_source: str
    cpp_source: str

    @property
    def so_path(self) -> Path:
        return self.directory / f"{self.module_name}.so"

    @property
    def owner_file(self) -> Path:
        return Path(str(self.lock_file) + ".owner")

    @property
    def failed_dir(self) -> Path:
        return self.directory.with_name(self.directory.name + ".failed")

    @property
    def tmp_prefix(self) -> str:
        return self.directory.name + ".tmp-"


def safe_name(name: str) -> str:
    safe = re.sub(r"\W", "_", str(name), flags=re.ASCII).strip("_") or "ext"
    return safe[:48]


def plan_extension(name: str, cuda_source: str, cpp_source: str, *, extra_cuda_cflags=(), extra_cflags=(),
                   arch_list: str | None = None, cache_dir=None) -> BuildPlan:
    """The cache key, directory, lock and module name ``build_extension`` would use (compiles nothing)."""
    import torch

    home = cuda_home()
    arch, note = resolve_arch(arch_list)
    extra_cuda_cflags = tuple(str(f) for f in extra_cuda_cflags)
    extra_cflags = tuple(str(f) for f in extra_cflags)
    safe = safe_name(name)
    parts = {
        "format": BUILD_FORMAT,
        "name": safe,
        "cuda_source": cuda_source,
        "cpp_source": cpp_source,
        "cuda_flags": [*BASE_CUDA_FLAGS, *extra_cuda_cflags],
        "cxx_flags": [*BASE_CXX_FLAGS, *extra_cflags],
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "nvcc": tool_version(os.path.join(home, "bin", "nvcc"), "--version"),
        "cxx": tool_version(cxx(), "--version").splitlines()[0],
        "arch": arch,
        "python": [sys.implementation.cache_tag, sys.version_info[:3], sysconfig.get_config_var("EXT_SUFFIX")],
    }
    key = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
    root = cache_root(cache_dir) / "torch-ext"
    directory = root / f"{safe}-{key[:20]}"
    return BuildPlan(name=safe, key=key, module_name=f"n2c_{safe}_{key[:12]}", directory=directory,
                     lock_file=root / f"{directory.name}.lock", arch_list=arch, arch_note=note, cuda_home=home,
                     extra_cuda_cflags=extra_cuda_cflags, extra_cflags=extra_cflags,
                     cuda_source=cuda_source, cpp_source=cpp_source)
