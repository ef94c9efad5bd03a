"""BuildPlan + a fresh directory -> the compiled extension in it: the nvcc and host-compiler steps (through
ninja, or directly when ninja is missing), a progress line, and the trimmed error message of a failed build.
Where builds live, their lock and their publication are cache.py's."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .. import progress
from ..sandbox import scrubbed_env
from .plan import BUILD_FORMAT, BuildPlan
from .toolchain import BASE_CUDA_FLAGS, BASE_CXX_FLAGS, arch_flags, binding_flags, cxx, link_flags, sm_label

# --------------------------------------------------------------------------- compile


@dataclass(frozen=True)
class Step:
    output: str
    inputs: tuple
    command: tuple  # argv, run in the build directory
    description: str


@dataclass(frozen=True)
class Compiled:
    ok: bool
    output: str  # the compilers' output (also written to build.log)
    failed_command: str | None
    seconds: float
    runner: str  # "ninja" or "direct"


def compile_in(plan: BuildPlan, build_dir: Path, *, verbose: bool, progress: bool) -> Compiled:
    """Write the plan's sources and build.ninja into BUILD_DIR and compile them there."""
    cu_name, cpp_name = f"{plan.name}.cu", f"{plan.name}_bind.cpp"
    (build_dir / cu_name).write_text(plan.cuda_source)
    (build_dir / cpp_name).write_text(plan.cpp_source)
    compiles, link = steps(plan, cu_name, cpp_name)
    (build_dir / "build.ninja").write_text(ninja_file(plan, compiles, link))
    env = scrubbed_env(CUDA_HOME=plan.cuda_home)  # the source may be a model's: no secret reaches its compilers
    ticker = Progress(plan, progress)
    ticker.start()
    ok = False
    ninja = shutil.which("ninja")
    try:
        if ninja:
            output, failed_command = run_ninja(ninja, build_dir, env, verbose=verbose, ticker=ticker)
        else:  # same commands, run here: two compiles in parallel, then the link
            output, failed_command = run_steps(compiles, link, build_dir, env, verbose=verbose, ticker=ticker)
        ok = failed_command is None and (build_dir / plan.so_path.name).is_file()
    finally:
        ticker.stop(ok)
    (build_dir / "build.log").write_text(output)
    return Compiled(ok, output, failed_command, ticker.elapsed, "ninja" if ninja else "direct")


def steps(plan: BuildPlan, cu_name: str, cpp_name: str) -> tuple[list[Step], Step]:
    home = plan.cuda_home
    host = cxx()

    # The kernel file: plain nvcc; no torch headers, include paths or defines.
    ccbin = ["-ccbin", os.environ["CXX"]] if os.environ.get("CXX") else []
    cu_obj = f"{plan.name}.cuda.o"
    cuda = Step(cu_obj, (cu_name,), (os.path.join(home, "bin", "nvcc"), *ccbin, "-c", cu_name, "-o", cu_obj,
                                     *BASE_CUDA_FLAGS, *arch_flags(plan.arch_list), *plan.extra_cuda_cflags),
                f"nvcc {cu_name}")

    # The binding: what torch.utils.cpp_extension uses for the .cpp of a CUDA extension.
    cpp_obj = f"{plan.name}_bind.o"
    binding = Step(cpp_obj, (cpp_name,), (host, "-c", cpp_name, "-o", cpp_obj,
                                          f"-DTORCH_EXTENSION_NAME={plan.module_name}",
                                          "-DTORCH_API_INCLUDE_EXTENSION_H", *binding_flags(home),
                                          *BASE_CXX_FLAGS, *plan.extra_cflags),
                   f"c++ {cpp_name}")

    so = plan.so_path.name
    link = Step(so, (cpp_obj, cu_obj), (host, cpp_obj, cu_obj, "-shared", "-o", so, *link_flags(home)),
                f"link {so}")
    return [cuda, binding], link


def ninja_file(plan: BuildPlan, compiles: list[Step], link: Step) -> str:
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


def _die_with_parent():  # runs in the child between fork and exec
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass


_PREEXEC = _die_with_parent if sys.platform.startswith("linux") else None


_NINJA_STATUS = re.compile(r"^\[(\d+)/(\d+)\] (.*)")


def _pump(proc, sink: list, verbose: bool, stamp: list, on_line=None):
    def read():
        for raw in proc.stdout:
            line = raw.decode(errors="replace")
            sink.append(line)
            stamp[0] = time.monotonic()
            if on_line is not None:
                on_line(line)
            if verbose:
                sys.stderr.write(line)
        proc.stdout.close()

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def run_ninja(ninja: str, build_dir: Path, env: dict, *, verbose: bool, ticker=None) -> tuple[str, str | None]:
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
    def status(line):
        m = _NINJA_STATUS.match(line)
        if m and ticker is not None:
            ticker.step(int(m.group(1)), int(m.group(2)), m.group(3).strip())

    reader = _pump(proc, lines, verbose, stamp, status)
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


def run_steps(compiles: list[Step], link: Step, build_dir: Path, env: dict, *,
              verbose: bool, ticker=None) -> tuple[str, str | None]:
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
                    if ticker is not None:
                        ticker.step(len(compiles) - len(running), len(compiles) + 1, step.description)
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


class Progress:
    """A cold build on stderr: on a terminal a progress bar (translator/progress.py: the steps done of nvcc,
    c++ and the link, and the elapsed time); elsewhere one line when it starts and one when it ends, so a
    CI log says where the seconds went."""

    def __init__(self, plan: BuildPlan, enabled: bool):
        self.enabled = enabled
        self.tty = enabled and progress.enabled()
        note = f"; {plan.arch_note}" if plan.arch_note else ""
        self.line = (f"numba2cuda: building {plan.name} for {sm_label(plan.arch_list)} "
                     f"(first use; cached in {plan.directory}{note}) ...")
        self.name = plan.name
        self.t0 = time.monotonic()
        self.elapsed = 0.0
        self._bar_cm = None
        self._bar = None

    def start(self):
        self.t0 = time.monotonic()
        if not self.enabled:
            return
        if self.tty:
            self._bar_cm = progress.bar(f"building {self.name}", total=3)
            self._bar = self._bar_cm.__enter__()
            self._bar.print(self.line)
        else:
            print(self.line, file=sys.stderr, flush=True)

    def step(self, done: int, total: int, what: str):
        """A compiler step finished (or ninja's status line `[done/total] what`)."""
        if self._bar is not None:
            self._bar.update(completed=done, total=total, note=what)

    def stop(self, ok: bool):
        self.elapsed = time.monotonic() - self.t0
        if not self.enabled:
            return
        verdict = f"built in {self.elapsed:.1f} s" if ok else f"failed after {self.elapsed:.1f} s"
        if self._bar_cm is not None:
            self._bar_cm.__exit__(None, None, None)
            self._bar_cm = self._bar = None
        print(f"numba2cuda: {self.name} {verdict}", file=sys.stderr, flush=True)


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


def error_message(plan: BuildPlan, output: str, build_dir: Path, command: str, max_errors: int = 6) -> str:
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
