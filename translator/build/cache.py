"""sources -> importable extension module, cached by content.

``build_extension(name, cuda_source, cpp_source)`` compiles a kernel ``.cu`` (plain CUDA, no torch
headers) and a pybind11/torch binding ``.cpp`` as two translation units in parallel (one ninja
file, driven here), links them into one Python extension and imports it.

Cache layout (``cache_root()/torch-ext``)::

    <name>-<key[:20]>/              published build: sources, build.ninja, build.log, the .so,
                                    and ``complete`` (JSON, written last); only a directory with
                                    ``complete`` is ever loaded
    <name>-<key[:20]>.lock          inter-process lock (flock; the kernel drops it when its holder dies)
    <name>-<key[:20]>.lock.owner    who holds the lock (pid, host, start time), for error messages
    <name>-<key[:20]>.tmp-*         a build in progress; removed by the next lock holder if stale
    <name>-<key[:20]>.failed/       the last failed build of this key, kept for inspection

The key is a sha256 over both sources, all flags, torch and CUDA versions, the nvcc version
string, the host compiler, the target architectures, the Python version and ``BUILD_FORMAT``.
The Python module inside the ``.so`` is ``n2c_<name>_<key[:12]>``, so two versions of one kernel
file can be imported in one process.

Warm path: when the published directory is complete the ``.so`` is imported directly
(``ExtensionFileLoader``), without the lock, ninja or ``torch.utils.cpp_extension``. The cold path's
compile steps, progress lines and error messages are in build_compile.py.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
import threading
import time
import types
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BuildError", "BuildPlan", "build_extension", "plan_extension", "cuda_home", "cache_root",
           "BUILD_FORMAT", "STATS"]

#: Bump when the layout, the flag set or anything else that changes the produced .so changes.
BUILD_FORMAT = 1

#: Default target when there is no GPU and neither ``arch_list`` nor TORCH_CUDA_ARCH_LIST says one.
DEFAULT_ARCH = "9.0"

#: Counters for this process: "compiled" (ninja ran and succeeded), "loaded" (a published .so was
#: imported), "memory" (the module was already imported in this process).
STATS = {"compiled": 0, "loaded": 0, "memory": 0}

_MODULES: dict[str, types.ModuleType] = {}  # key -> imported module
_MEMO_LOCK = threading.Lock()
_ENV_LOCK = threading.RLock()  # os.environ is changed for a moment while asking torch

_BASE_CUDA_FLAGS = ("-O3", "-std=c++17", "-Xcompiler", "-fPIC")
_BASE_CXX_FLAGS = ("-O3", "-fPIC")


class BuildError(RuntimeError):
    """The extension could not be built or loaded; the message says why and where to look."""


# --------------------------------------------------------------------------- toolkit and cache


def _is_nvcc(path) -> bool:
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def _nvcc_behind_wrapper(path: str) -> str | None:
    """The real nvcc a small wrapper script execs (``exec /usr/local/cuda-13.0/bin/nvcc "$@"``)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None  # a binary: it is the real thing
    for word in re.findall(rb"""[^\s'"]+/bin/nvcc\b""", head):
        candidate = os.path.realpath(word.decode(errors="replace"))
        if candidate != os.path.realpath(path) and _is_nvcc(candidate):
            return candidate
    return None


def cuda_home() -> str:
    """The CUDA toolkit to build with: $CUDA_HOME (or $CUDA_PATH) when it holds bin/nvcc, else the
    toolkit of the ``nvcc`` on PATH (following symlinks and one-line wrapper scripts), else
    /usr/local/cuda."""
    return _cuda_home(os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), os.environ.get("PATH"))


@functools.lru_cache(maxsize=8)
def _cuda_home(env_home, env_path, path_var) -> str:
    for home in (env_home, env_path):
        if home and _is_nvcc(os.path.join(home, "bin", "nvcc")):
            return os.path.abspath(home)
    which = shutil.which("nvcc", path=path_var)
    if which:
        real = _nvcc_behind_wrapper(which) or os.path.realpath(which)
        return os.path.dirname(os.path.dirname(real))
    if _is_nvcc("/usr/local/cuda/bin/nvcc"):
        return "/usr/local/cuda"
    bad = f" ($CUDA_HOME={env_home!r} has no bin/nvcc)" if env_home else ""
    raise BuildError("numba2cuda: cannot find the CUDA toolkit: no nvcc on PATH, in $CUDA_HOME or in "
                     f"/usr/local/cuda{bad}\n    hint: install the CUDA toolkit, or set CUDA_HOME to it")


def cache_root(cache_dir=None) -> Path:
    """The numba2cuda cache: ``cache_dir``, else $NUMBA2CUDA_CACHE, else ~/.cache/numba2cuda.
    Extensions live in its ``torch-ext`` subfolder."""
    root = cache_dir or os.environ.get("NUMBA2CUDA_CACHE") or os.path.join("~", ".cache", "numba2cuda")
    return Path(os.path.abspath(os.path.expanduser(str(root))))


@functools.lru_cache(maxsize=8)
def _tool_version(*cmd: str) -> str:
    try:
        out = subprocess.run(list(cmd), capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildError(f"numba2cuda: cannot run {' '.join(cmd)}: {exc}") from None
    if out.returncode != 0:
        raise BuildError(f"numba2cuda: {' '.join(cmd)} failed (exit {out.returncode}):\n{out.stdout}{out.stderr}")
    return out.stdout.strip()


def _cxx() -> str:
    return os.environ.get("CXX") or "c++"


def _cpp_ext():
    """torch.utils.cpp_extension, imported (only on the build path) with the right CUDA_HOME: its import
    guesses one from the nvcc on PATH (a wrapper script here) and warns when there is no GPU."""
    import logging

    if "torch.utils.cpp_extension" not in sys.modules:
        logger = logging.getLogger("torch.utils.cpp_extension")
        level = logger.level
        logger.setLevel(logging.ERROR)
        try:
            with _ENV_LOCK, _env(CUDA_HOME=cuda_home()):
                import torch.utils.cpp_extension  # noqa: F401
        finally:
            logger.setLevel(level)
    return sys.modules["torch.utils.cpp_extension"]


# --------------------------------------------------------------------------- architectures


def _resolve_arch(arch_list: str | None) -> tuple[str, str]:
    """(arch list, note for the progress line)."""
    import torch

    if arch_list:
        return _norm_arch(arch_list), ""
    env = (os.environ.get("TORCH_CUDA_ARCH_LIST") or "").strip()
    if env and env != "native":
        return _norm_arch(env), ""
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        return f"{major}.{minor}", ""
    return DEFAULT_ARCH, (f"no GPU and no TORCH_CUDA_ARCH_LIST, so assuming {_sm_label(DEFAULT_ARCH)}; "
                          "set TORCH_CUDA_ARCH_LIST for another GPU")


def _norm_arch(text: str) -> str:
    """"9.0", "8.6+PTX", "9.0a", also "sm_90" / "90" / "compute_90"; named ones ("Hopper") go to torch."""
    parts = []
    for part in (p for p in re.split(r"[;,\s]+", str(text).strip()) if p):
        m = re.fullmatch(r"(?:sm_|compute_)?(\d+)(\d)([af]?)(\+PTX)?", part, flags=re.IGNORECASE)
        if m:
            part = f"{int(m.group(1))}.{m.group(2)}{m.group(3).lower()}{'+PTX' if m.group(4) else ''}"
        parts.append(part)
    if not parts:
        raise BuildError(f"numba2cuda: empty architecture list {text!r}")
    return ";".join(parts)


def _sm_label(arch: str) -> str:
    labels = []
    for part in arch.split(";"):
        m = re.fullmatch(r"(\d+)\.(\d+)([af]?)(\+PTX)?", part)
        labels.append(f"sm_{m.group(1)}{m.group(2)}{m.group(3)}{'+PTX' if m.group(4) else ''}" if m else part)
    return ", ".join(labels)


def _arch_flags(arch: str) -> list[str]:
    """-gencode flags: from torch (TORCH_CUDA_ARCH_LIST set to ``arch`` only while asking), which also
    knows named architectures ("Hopper"); by our own parser if that private helper is gone."""
    _get_cuda_arch_flags = getattr(_cpp_ext(), "_get_cuda_arch_flags", None)
    if _get_cuda_arch_flags is not None:
        with _ENV_LOCK, _env(TORCH_CUDA_ARCH_LIST=arch):
            try:
                return sorted(_get_cuda_arch_flags())
            except ValueError as exc:
                raise BuildError(f"numba2cuda: bad architecture list {arch!r}: {exc}") from None
    flags = []
    for part in arch.split(";"):
        m = re.fullmatch(r"(\d+)\.(\d+)([af]?)(\+PTX)?", part)
        if not m:
            raise BuildError(f"numba2cuda: bad architecture {part!r} in {arch!r} (write e.g. 9.0 or 8.6+PTX)")
        num = m.group(1) + m.group(2) + m.group(3)
        flags.append(f"-gencode=arch=compute_{num},code=sm_{num}")
        if m.group(4):
            flags.append(f"-gencode=arch=compute_{num},code=compute_{num}")
    return sorted(set(flags))


@contextlib.contextmanager
def _env(**values):
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


# --------------------------------------------------------------------------- the plan


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


def _safe_name(name: str) -> str:
    safe = re.sub(r"\W", "_", str(name), flags=re.ASCII).strip("_") or "ext"
    return safe[:48]


def plan_extension(name: str, cuda_source: str, cpp_source: str, *, extra_cuda_cflags=(), extra_cflags=(),
                   arch_list: str | None = None, cache_dir=None) -> BuildPlan:
    """The cache key, directory, lock and module name ``build_extension`` would use (compiles nothing)."""
    import torch

    home = cuda_home()
    arch, note = _resolve_arch(arch_list)
    extra_cuda_cflags = tuple(str(f) for f in extra_cuda_cflags)
    extra_cflags = tuple(str(f) for f in extra_cflags)
    safe = _safe_name(name)
    parts = {
        "format": BUILD_FORMAT,
        "name": safe,
        "cuda_source": cuda_source,
        "cpp_source": cpp_source,
        "cuda_flags": [*_BASE_CUDA_FLAGS, *extra_cuda_cflags],
        "cxx_flags": [*_BASE_CXX_FLAGS, *extra_cflags],
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "nvcc": _tool_version(os.path.join(home, "bin", "nvcc"), "--version"),
        "cxx": _tool_version(_cxx(), "--version").splitlines()[0],
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


# --------------------------------------------------------------------------- entry point


def build_extension(name: str, cuda_source: str, cpp_source: str, *, extra_cuda_cflags=(), extra_cflags=(),
                    arch_list: str | None = None, cache_dir=None, lock_timeout: float = 900, verbose=False,
                    progress=True) -> types.ModuleType:
    """Compile (once per content) and import the extension made of ``cuda_source`` (kernel .cu, no torch
    headers, exporting ``extern "C"`` launchers) and ``cpp_source`` (binding .cpp that includes
    <torch/extension.h> and defines ``PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)``).

    Raises BuildError on compile errors (trimmed compiler output, the build directory, the command)
    and when another process holds this build's lock for longer than ``lock_timeout`` seconds.
    """
    try:
        import torch  # noqa: F401  (the .so links against libtorch: torch must be loaded first)
    except ImportError as exc:
        raise BuildError(f"numba2cuda: PyTorch is needed to build extensions: {exc}\n"
                         "    hint: pip install torch") from None
    plan = plan_extension(name, cuda_source, cpp_source, extra_cuda_cflags=extra_cuda_cflags,
                          extra_cflags=extra_cflags, arch_list=arch_list, cache_dir=cache_dir)
    with _MEMO_LOCK:
        mod = _MODULES.get(plan.key)
    if mod is not None:
        STATS["memory"] += 1
        return mod
    if not _complete(plan.directory):
        plan.directory.parent.mkdir(parents=True, exist_ok=True)
        with _hold_lock(plan, lock_timeout, progress):
            if not _complete(plan.directory):  # another process may have published it while we waited
                _remove_stale(plan)
                from .build_compile import compile_and_publish

                compile_and_publish(plan, verbose=verbose, progress=progress)
    return _load(plan)


def _complete(directory: Path) -> bool:
    return (directory / "complete").is_file()


def _load(plan: BuildPlan) -> types.ModuleType:
    with _MEMO_LOCK:
        mod = _MODULES.get(plan.key)
        if mod is not None:
            return mod
        path = str(plan.so_path)
        try:
            loader = importlib.machinery.ExtensionFileLoader(plan.module_name, path)
            spec = importlib.util.spec_from_file_location(plan.module_name, path, loader=loader)
            mod = importlib.util.module_from_spec(spec)
            loader.exec_module(mod)
        except ImportError as exc:
            raise BuildError(f"numba2cuda: cannot import the built extension {path}: {exc}\n"
                             f"    hint: delete {plan.directory} to rebuild it") from None
        sys.modules[plan.module_name] = mod
        _MODULES[plan.key] = mod
        STATS["loaded"] += 1
        return mod


# --------------------------------------------------------------------------- lock


@contextlib.contextmanager
def _hold_lock(plan: BuildPlan, timeout: float, progress: bool):
    from filelock import FileLock, Timeout

    lock = FileLock(str(plan.lock_file))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if progress:
            print(f"numba2cuda: waiting for another process building {plan.name} (lock {plan.lock_file}) ...",
                  file=sys.stderr, flush=True)
        try:
            lock.acquire(timeout=-1 if timeout is None else max(float(timeout), 0.0))  # None: wait forever
        except Timeout:
            raise BuildError(_lock_timeout_message(plan, timeout)) from None
    try:
        _write_owner(plan)
        yield
    finally:
        with contextlib.suppress(OSError):
            plan.owner_file.unlink()
        lock.release()


def _write_owner(plan: BuildPlan) -> None:
    info = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time(),
            "argv": " ".join(sys.argv)[:300]}
    with contextlib.suppress(OSError):
        tmp = plan.owner_file.with_name(plan.owner_file.name + f".{os.getpid()}")
        tmp.write_text(json.dumps(info))
        os.replace(tmp, plan.owner_file)


def _lock_timeout_message(plan: BuildPlan, timeout: float) -> str:
    holder = "another process (its owner record is missing)"
    try:
        info = json.loads(plan.owner_file.read_text())
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info["started"]))
        holder = f"pid {info['pid']} on {info['host']} (since {since}"
        if info["host"] == socket.gethostname():
            try:
                os.kill(int(info["pid"]), 0)
                holder += ", still running"
            except ProcessLookupError:
                holder += ", no longer running"
            except PermissionError:
                holder += ", running as another user"
        holder += f"; command: {info.get('argv') or '?'})"
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return (f"numba2cuda: timed out after {timeout:g} s waiting for the build lock {plan.lock_file}\n"
            f"    held by {holder}\n"
            f"    hint: wait for that build to finish, or stop that process; a dead process releases the lock "
            f"by itself, so if none is running (e.g. a network filesystem kept it) delete {plan.lock_file}")


def _remove_stale(plan: BuildPlan) -> None:
    """With the lock held: temp dirs of this key belong to dead builds; an unmarked final dir is junk."""
    for tmp in plan.directory.parent.glob(glob.escape(plan.tmp_prefix) + "*"):
        _rmtree(tmp)
    if plan.directory.exists() and not _complete(plan.directory):
        _rmtree(plan.directory)


def _rmtree(path: Path) -> None:
    for _ in range(5):  # a compiler killed a moment ago may still drop a file in
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.lexists(path):
            return
        time.sleep(0.2)


