"""BuildPlan -> published build directory: the nvcc and g++ steps (through ninja, or directly), progress
lines, and the trimmed error message of a failed build. The cache, lock and entry point are in build.py."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from .build import (BUILD_FORMAT, STATS, _BASE_CUDA_FLAGS, _BASE_CXX_FLAGS, BuildError, BuildPlan, _arch_flags,
                    _cpp_ext, _cxx, _rmtree, _sm_label)

# --------------------------------------------------------------------------- compile


@dataclass(frozen=True)
class _Step:
    output: str
    inputs: tuple
    command: tuple  # argv, run in the build directory
    description: str


def compile_and_publish(plan: BuildPlan, *, verbose: bool, progress: bool) -> None:
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


def pick_error_lines(lines: list[str], max_errors: int = 6) -> tuple[list[str], int]:
    """(the first MAX_ERRORS compiler error lines with their indented context, else the last 30 non-blank
    lines; how many error lines were picked)."""
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
    return picked, errors


def _error_message(plan: BuildPlan, output: str, build_dir: Path, command: str, max_errors: int = 6) -> str:
    lines = output.splitlines()
    picked, errors = pick_error_lines(lines, max_errors)
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
