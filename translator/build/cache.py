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
(``ExtensionFileLoader``), without the lock, ninja or ``torch.utils.cpp_extension``. The cold path
compiles in a temporary directory (compile.py) and renames it into place under the lock.
"""

from __future__ import annotations

import contextlib
import glob
import importlib.machinery
import importlib.util
import json
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
import types
from pathlib import Path

from .compile import compile_in, error_message
from .plan import BUILD_FORMAT, BuildPlan, plan_extension
from .toolchain import BuildError

#: Counters for this process: "compiled" (ninja ran and succeeded), "loaded" (a published .so was
#: imported), "memory" (the module was already imported in this process).
STATS = {"compiled": 0, "loaded": 0, "memory": 0}

_MODULES: dict[str, types.ModuleType] = {}  # key -> imported module
_MEMO_LOCK = threading.Lock()


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


def _compile_and_publish(plan: BuildPlan, *, verbose: bool, progress: bool) -> None:
    """With the lock held: compile in a fresh temporary directory, then rename it into place (atomic); a failed
    build is kept as ``<dir>.failed`` for inspection and never published."""
    tmp = Path(tempfile.mkdtemp(prefix=plan.tmp_prefix, dir=plan.directory.parent))
    try:
        result = compile_in(plan, tmp, verbose=verbose, progress=progress)
        if not result.ok:
            failed = plan.failed_dir
            _rmtree(failed)
            os.rename(tmp, failed)
            raise BuildError(error_message(plan, result.output, failed, result.failed_command or "ninja"))
        meta = {"format": BUILD_FORMAT, "key": plan.key, "module": plan.module_name, "so": plan.so_path.name,
                "arch": plan.arch_list, "built": time.time(), "seconds": round(result.seconds, 2),
                "runner": result.runner}
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


