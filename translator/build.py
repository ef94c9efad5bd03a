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
(``ExtensionFileLoader``), without the lock, ninja or ``torch.utils.cpp_extension``.
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
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import types
import warnings
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
                _compile_and_publish(plan, verbose=verbose, progress=progress)
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


# --------------------------------------------------------------------------- compile


@dataclass(frozen=True)
class _Step:
    output: str
    inputs: tuple
    command: tuple  # argv, run in the build directory
    description: str


def _compile_and_publish(plan: BuildPlan, *, verbose: bool, progress: bool) -> None:
    tmp = Path(tempfile.mkdtemp(prefix=plan.tmp_prefix, dir=plan.directory.parent))
    try:
        cu_name, cpp_name = f"{plan.name}.cu", f"{plan.name}_bind.cpp"
        (tmp / cu_name).write_text(plan.cuda_source)
        (tmp / cpp_name).write_text(plan.cpp_source)
        compiles, link = _steps(plan, cu_name, cpp_name)
        (tmp / "build.ninja").write_text(_ninja_file(plan, compiles, link))
        env = dict(os.environ, CUDA_HOME=plan.cuda_home)
        ticker = _Progress(plan, progress)
        ticker.start()
        ok = False
        try:
            ninja = shutil.which("ninja")
            if ninja:
                output, failed_command = _run_ninja(ninja, tmp, env, verbose=verbose)
            else:  # same commands, run here: two compiles in parallel, then the link
                output, failed_command = _run_steps(compiles, link, tmp, env, verbose=verbose)
            ok = failed_command is None and (tmp / plan.so_path.name).is_file()
        finally:
            ticker.stop(ok)
        (tmp / "build.log").write_text(output)
        if not ok:
            failed = plan.failed_dir
            _rmtree(failed)
            os.rename(tmp, failed)
            raise BuildError(_error_message(plan, output, failed, failed_command or "ninja"))
        meta = {"format": BUILD_FORMAT, "key": plan.key, "module": plan.module_name, "so": plan.so_path.name,
                "arch": plan.arch_list, "built": time.time(), "seconds": round(ticker.elapsed, 2),
                "runner": "ninja" if ninja else "direct"}
        _write_synced(tmp / "complete", json.dumps(meta, indent=1) + "\n")  # the last file written
        os.rename(tmp, plan.directory)  # atomic publish (we hold the lock; an unmarked dir was removed)
        _fsync_dir(plan.directory.parent)
        _rmtree(plan.failed_dir)
        STATS["compiled"] += 1
    except BaseException:
        if tmp.exists():
            _rmtree(tmp)
        raise


def _write_synced(path: Path, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _steps(plan: BuildPlan, cu_name: str, cpp_name: str) -> tuple[list[_Step], _Step]:
    import torch

    cpp_ext = _cpp_ext()
    home = plan.cuda_home
    cuda_lib = os.path.join(home, "lib64")
    if not os.path.isdir(cuda_lib) and os.path.isdir(os.path.join(home, "lib")):
        cuda_lib = os.path.join(home, "lib")
    torch_lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    py_include = sysconfig.get_path("include", scheme="posix_prefix")
    cxx = _cxx()

    # The kernel file: plain nvcc; no torch headers, include paths or defines.
    ccbin = ["-ccbin", os.environ["CXX"]] if os.environ.get("CXX") else []
    cu_obj = f"{plan.name}.cuda.o"
    cuda = _Step(cu_obj, (cu_name,), (os.path.join(home, "bin", "nvcc"), *ccbin, "-c", cu_name, "-o", cu_obj,
                                      *_BASE_CUDA_FLAGS, *_arch_flags(plan.arch_list), *plan.extra_cuda_cflags),
                 f"nvcc {cu_name}")

    # The binding: what torch.utils.cpp_extension uses for the .cpp of a CUDA extension.
    abi = []
    for helper in ("_get_pybind11_abi_build_flags", "_get_glibcxx_abi_build_flags"):  # older torch only
        if hasattr(cpp_ext, helper):
            with warnings.catch_warnings():  # "PyBind11 ABI handling is internal to PyBind11" (returns [])
                warnings.simplefilter("ignore", DeprecationWarning)
                abi += list(getattr(cpp_ext, helper)())
    if not any("_GLIBCXX_USE_CXX11_ABI" in f for f in abi) and hasattr(torch._C, "_GLIBCXX_USE_CXX11_ABI"):
        abi.append(f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}")
    includes = []
    for path in [*cpp_ext.include_paths(), os.path.join(home, "include"), py_include]:
        includes += ["-isystem", path]
    cpp_obj = f"{plan.name}_bind.o"
    binding = _Step(cpp_obj, (cpp_name,), (cxx, "-c", cpp_name, "-o", cpp_obj,
                                           f"-DTORCH_EXTENSION_NAME={plan.module_name}",
                                           "-DTORCH_API_INCLUDE_EXTENSION_H", *includes, *abi,
                                           f"-std={_torch_cxx_std()}", *_BASE_CXX_FLAGS, *plan.extra_cflags),
                    f"c++ {cpp_name}")

    so = plan.so_path.name
    link = _Step(so, (cpp_obj, cu_obj), (cxx, cpp_obj, cu_obj, "-shared", "-o", so,
                                         f"-L{torch_lib}", "-lc10", "-lc10_cuda", "-ltorch_cpu", "-ltorch_cuda",
                                         "-ltorch", "-ltorch_python", f"-L{cuda_lib}", "-lcudart"),
                 f"link {so}")
    return [cuda, binding], link


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


def _ninja_file(plan: BuildPlan, compiles: list[_Step], link: _Step) -> str:
    def esc(path: str) -> str:
        return path.replace("$", "$$").replace(" ", "$ ").replace(":", "$:")

    lines = ["ninja_required_version = 1.3",
             f"# numba2cuda extension {plan.module_name} (build format {BUILD_FORMAT}, key {plan.key})",
             "# to rebuild by hand: ninja (in this directory)",
             "", "rule run", "  command = $cmd", "  description = $desc", ""]
    for step in [*compiles, link]:
        lines += [f"build {esc(step.output)}: run {' '.join(esc(i) for i in step.inputs)}",
                  f"  cmd = {shlex.join(step.command).replace('$', '$$')}",
                  f"  desc = {step.description}"]
    lines += [f"default {esc(link.output)}", ""]
    return "\n".join(lines)


@functools.lru_cache(maxsize=1)
def _torch_cxx_std() -> str:
    """The C++ standard torch's own extension builder uses for this torch (c++17 before some 2.x, then c++20)."""
    import inspect

    try:
        found = re.findall(r"-std=(c\+\+\d+)", inspect.getsource(_cpp_ext()._write_ninja_file_to_build_library))
        if found:
            return max(found, key=lambda s: int(s[3:]))
    except (AttributeError, OSError, TypeError):
        pass
    return "c++17"


def _die_with_parent():  # runs in the child between fork and exec
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass


_PREEXEC = _die_with_parent if sys.platform.startswith("linux") else None


def _pump(proc, sink: list, verbose: bool, stamp: list):
    def read():
        for raw in proc.stdout:
            line = raw.decode(errors="replace")
            sink.append(line)
            stamp[0] = time.monotonic()
            if verbose:
                sys.stderr.write(line)
        proc.stdout.close()

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def _run_ninja(ninja: str, build_dir: Path, env: dict, *, verbose: bool) -> tuple[str, str | None]:
    """(output, the failed command or None). When a step fails the other is stopped (for an error in
    the .cu: no waiting ~20 s for the binding). ninja gets SIGTERM if this process dies
    (PR_SET_PDEATHSIG) and then stops its compilers, so a killed build leaves nothing running."""
    cmd = [ninja]
    if os.environ.get("MAX_JOBS", "").isdigit():
        cmd += ["-j", os.environ["MAX_JOBS"]]
    if verbose:
        cmd.append("-v")
    proc = subprocess.Popen(cmd, cwd=build_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, env=env, preexec_fn=_PREEXEC)
    lines: list[str] = []
    stamp = [time.monotonic()]
    reader = _pump(proc, lines, verbose, stamp)
    try:
        while proc.poll() is None:
            if any(line.startswith("FAILED: ") for line in lines) and time.monotonic() - stamp[0] > 0.5:
                proc.terminate()  # ninja passes it on to the compilers still running
                break
            time.sleep(0.05)
        rc = proc.wait()
    except BaseException:
        proc.terminate()
        with contextlib.suppress(Exception):
            proc.wait(timeout=10)
        raise
    reader.join(timeout=10)
    failed = [lines[k + 1].rstrip("\n") for k, line in enumerate(lines[:-1]) if line.startswith("FAILED: ")]
    if failed:
        return "".join(lines), failed[0]
    return "".join(lines), None if rc == 0 else shlex.join(cmd)


def _run_steps(compiles: list[_Step], link: _Step, build_dir: Path, env: dict, *,
               verbose: bool) -> tuple[str, str | None]:
    """Without ninja: the compiles in parallel (each in its own process group), then the link."""
    log: list[str] = []

    def start(step):
        if verbose:
            sys.stderr.write(shlex.join(step.command) + "\n")
        proc = subprocess.Popen(list(step.command), cwd=build_dir, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                start_new_session=True, preexec_fn=_PREEXEC)
        out: list[str] = []
        return step, proc, out, _pump(proc, out, verbose, [0.0])

    def stop(proc):
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(Exception):
            proc.wait(timeout=10)

    running = [start(step) for step in compiles]
    try:
        failed = None
        while running and failed is None:
            for item in list(running):
                step, proc, out, reader = item
                if proc.poll() is None:
                    continue
                reader.join(timeout=10)
                running.remove(item)
                if proc.returncode == 0:
                    log.append(f"[done] {step.description}\n" + "".join(out))
                else:
                    log.append(f"FAILED: {step.output}\n{shlex.join(step.command)}\n" + "".join(out))
                    failed = shlex.join(step.command)
            time.sleep(0.05)
        if failed is None:
            step, proc, out, reader = start(link)
            running.append((step, proc, out, reader))
            proc.wait()
            reader.join(timeout=10)
            running.clear()
            if proc.returncode == 0:
                log.append(f"[done] {step.description}\n" + "".join(out))
            else:
                log.append(f"FAILED: {step.output}\n{shlex.join(step.command)}\n" + "".join(out))
                failed = shlex.join(step.command)
        return "".join(log), failed
    finally:
        for _, proc, _, _ in running:
            stop(proc)


# --------------------------------------------------------------------------- messages


class _Progress:
    """One stderr line while compiling; on a TTY an elapsed-seconds ticker on the same line."""

    def __init__(self, plan: BuildPlan, enabled: bool):
        self.enabled = enabled
        self.tty = enabled and _isatty(sys.stderr)
        note = f"; {plan.arch_note}" if plan.arch_note else ""
        self.line = (f"numba2cuda: building {plan.name} for {_sm_label(plan.arch_list)} "
                     f"(first use; cached in {plan.directory}{note}) ...")
        self.name = plan.name
        self.t0 = time.monotonic()
        self.elapsed = 0.0
        self._stop = threading.Event()
        self._thread = None
        self.prefix = self.line

    def start(self):
        self.t0 = time.monotonic()
        if not self.enabled:
            return
        if self.tty:
            # "\r" only rewrites a line that has not wrapped: a long line gets the ticker on its own line
            if len(self.line) + 24 > shutil.get_terminal_size((80, 24)).columns:
                sys.stderr.write(self.line + "\n")
                self.prefix = "   "
            else:
                sys.stderr.write(self.line)
                self.prefix = self.line
            sys.stderr.flush()
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        else:
            print(self.line, file=sys.stderr, flush=True)

    def _tick(self):
        while not self._stop.wait(1.0):
            sys.stderr.write(f"\r{self.prefix} {time.monotonic() - self.t0:.0f} s")
            sys.stderr.flush()

    def stop(self, ok: bool):
        self.elapsed = time.monotonic() - self.t0
        if not self.enabled:
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        verdict = f"built in {self.elapsed:.1f} s" if ok else f"failed after {self.elapsed:.1f} s"
        if self.tty:
            sys.stderr.write(f"\r{self.prefix} {verdict}\n")
        else:
            sys.stderr.write(f"numba2cuda: {self.name} {verdict}\n")
        sys.stderr.flush()


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


_ERROR_LINE = re.compile(
    r"^(?P<loc>[^\s:()]+\((?P<nvline>\d+)\)|[^\s:]+:(?P<line>\d+)(?::\d+)?):\s+(?:catastrophic |fatal )?error\b"
    r"|undefined reference to|\bld(?:\.\w+)?: .*error|collect2: error|nvcc fatal\b|nvcc error\b",
    re.IGNORECASE)


def _error_message(plan: BuildPlan, output: str, build_dir: Path, command: str, max_errors: int = 6) -> str:
    lines = output.splitlines()
    picked: list[str] = []
    errors = 0
    i = 0
    while i < len(lines) and errors < max_errors:
        if _ERROR_LINE.search(lines[i]):
            errors += 1
            picked.append(lines[i])
            i += 1
            # the compiler's own context: the source line and a caret, indented
            while i < len(lines) and lines[i][:1] in (" ", "\t") and lines[i].strip() and len(picked) < 60:
                if _ERROR_LINE.search(lines[i]):
                    break
                picked.append(lines[i])
                i += 1
            continue
        i += 1
    if not picked:  # nothing recognisable: show the end of the log
        picked = [line for line in lines if line.strip()][-30:]
    total = sum(1 for line in lines if _ERROR_LINE.search(line))
    if total > errors:
        picked.append(f"... and {total - errors} more error line(s) in {build_dir / 'build.log'}")

    if len(command) > 600:
        command = command[:600] + " ..."
    return "\n".join([
        f"numba2cuda: building {plan.name} failed:",
        *("    " + line for line in picked),
        f"    build directory: {build_dir} (sources, build.ninja, build.log)",
        f"    command: {command}",
        f"    to retry by hand: cd {shlex.quote(str(build_dir))} && ninja",
    ])
