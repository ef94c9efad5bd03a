"""untrusted work -> a child process that may die without taking numba2cuda with it.

A translation is untrusted: a model wrote it, or a person edited it, or a rule is wrong. Whatever runs it
(the CPU runtime's library, a GPU launch that may fault, a model's code) runs here, in a child process
started with a scrubbed environment (no API key, no OPENAI_*/NUMBA2CUDA_* secrets), resource limits (CPU
time, address space, no core file), a wall-clock timeout, and its own stdout and stderr (a kernel's printf
never reaches the parent's output). A death, a signal or a timeout is a `ChildFailed` naming it; the parent
never dies and never waits past the deadline.

The child answers in a format that cannot run code when read: a JSON header and NumPy arrays in .npy form
(np.load with allow_pickle=False). The parent never unpickles what the child sends, since code in the child
(a model's constructor, a hand-edited kernel) could write anything to the pipe.

At the bottom of the pipeline: every stage that runs something untrusted uses it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

#: Never in os.environ while a command runs (llm.config withholds them), and never in a child's environment.
SECRET_ENV = ("OPENAI_API_KEY",)
SECRET_PREFIXES = ("OPENAI_", "NUMBA2CUDA_LLM_", "ANTHROPIC_", "AZURE_OPENAI_")
#: NUMBA2CUDA_* variables a child may keep (configuration, not secrets)
KEPT = ("NUMBA2CUDA_CACHE", "NUMBA2CUDA_TYPES", "NUMBA2CUDA_CONFINE")

_HEADER = struct.Struct("<Q")  # length prefix of each frame
MAX_FRAME = 1 << 34  # 16 GiB: a corrupt length is a failure, not an allocation


def scrubbed_env(base=None, **extra) -> dict:
    """A copy of BASE (default os.environ) without secrets: the API key, OPENAI_* and other credentials, and
    NUMBA2CUDA_* variables except plain configuration; EXTRA is added."""
    env = {}
    for k, v in (os.environ if base is None else base).items():
        if k in SECRET_ENV or k.startswith(SECRET_PREFIXES):
            continue
        if k.startswith("NUMBA2CUDA_") and k not in KEPT:
            continue
        if any(word in k.upper() for word in ("API_KEY", "TOKEN", "SECRET", "PASSWORD")):
            continue
        env[k] = v
    env.update(extra)
    return env


@dataclass(frozen=True)
class Limits:
    """What a child may use. None: no limit."""

    wall_seconds: float = 120.0
    cpu_seconds: int | None = 120
    address_space: int | None = 8 << 30  # bytes; a CUDA context reserves far more: pass None for GPU children
    core_file: bool = False
    file_size: int | None = None  # bytes any one file it writes may reach (SIGXFSZ past it): a printf loop, a
    # 1 GiB initialised array, must not fill the disk


class ChildFailed(Exception):
    """The child died (a signal, an exit) or outlasted its time; `reason` says which, `output` what it printed."""

    def __init__(self, reason: str, output: str = ""):
        self.reason = reason
        self.output = output
        super().__init__(reason)


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        hint = {"SIGSEGV": " (an invalid memory access)", "SIGBUS": " (an invalid memory access)",
                "SIGFPE": " (an arithmetic fault, e.g. an integer division by zero)",
                "SIGABRT": " (an abort, e.g. heap corruption detected by malloc)",
                "SIGILL": " (an illegal instruction, e.g. __builtin_trap)",
                "SIGSYS": " (a forbidden system call: starting a program, writing a file, the network)",
                "SIGXFSZ": " (its file-size limit: it wrote too much)",
                "SIGXCPU": " (its CPU-time limit)", "SIGKILL": " (killed: its time or memory limit)"}.get(name, "")
        return f"killed by {name}{hint}"
    return f"exited with status {returncode}"


def _preexec(limits: Limits):
    def apply():  # runs in the child between fork and exec
        import resource

        def lower(which, soft, hard):  # never above what this process may have: a sandboxed child's own child
            _, now = resource.getrlimit(which)
            if now != resource.RLIM_INFINITY:
                soft, hard = min(soft, now), min(hard, now)
            resource.setrlimit(which, (soft, hard))

        os.setsid()  # its own process group: a timeout kills every process it started
        if not limits.core_file:
            lower(resource.RLIMIT_CORE, 0, 0)
        if limits.cpu_seconds is not None:
            lower(resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 5)
        if limits.address_space is not None:
            lower(resource.RLIMIT_AS, limits.address_space, limits.address_space)
        if limits.file_size is not None:
            lower(resource.RLIMIT_FSIZE, limits.file_size, limits.file_size)
        with contextlib.suppress(Exception):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the parent
    return apply


def run_command(cmd: list[str], *, limits: Limits = Limits(), cwd=None, env: dict | None = None,
                input_text: str | None = None, stderr: bool = True) -> subprocess.CompletedProcess:
    """A program (a compiler, say) under LIMITS with a scrubbed environment; output captured (stdout and stderr
    together; stdout alone, stderr read and dropped, with stderr=False: output another program parses). INPUT_TEXT
    is its stdin (None: /dev/null). A timeout kills
    its whole process group and raises ChildFailed."""
    # stdin is a pipe whenever there is input, even "": /dev/null is not always the null device (on some
    # machines it is a regular file holding whatever was last written to it), and a child must not read that
    proc = subprocess.Popen(cmd, cwd=cwd, env=scrubbed_env(env), stdin=subprocess.DEVNULL if input_text is None else
                            subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT if stderr else subprocess.PIPE, text=True,
                            errors="replace", preexec_fn=_preexec(limits))
    try:
        out, _ = proc.communicate(input_text, timeout=limits.wall_seconds)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, _ = proc.communicate()
        raise ChildFailed(f"{os.path.basename(cmd[0])} timed out after {limits.wall_seconds:g} s", out or "") from None
    return subprocess.CompletedProcess(cmd, proc.returncode, out, None)


def _kill_group(proc) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.kill()


# --------------------------------------------------------------------------- frames: JSON + .npy arrays


def encode(header: dict, arrays: list) -> bytes:
    import numpy as np

    parts = [json.dumps({**header, "narrays": len(arrays)}).encode()]
    for a in arrays:
        buf = io.BytesIO()
        np.save(buf, np.asarray(a), allow_pickle=False)
        parts.append(buf.getvalue())
    return b"".join(_HEADER.pack(len(p)) + p for p in parts)


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read_frame(fd: int, deadline: float | None = None) -> tuple[dict, list]:
    import numpy as np

    def part():
        (n,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
        if n > MAX_FRAME:
            raise ValueError(f"a frame of {n} bytes")
        return _read_exact(fd, n, deadline)

    header = json.loads(part())
    if not isinstance(header, dict):
        raise ValueError("the header is not an object")
    arrays = [np.load(io.BytesIO(part()), allow_pickle=False) for _ in range(int(header.get("narrays", 0)))]
    return header, arrays


# --------------------------------------------------------------------------- a long-lived worker


class Worker:
    """A child process that runs registered functions of numba2cuda's own modules (``"translator.x.y:func"``)
    on JSON arguments and arrays, one call at a time. If it dies, the call raises ChildFailed and the next call
    starts a fresh child. Use as a context manager, or close()."""

    def __init__(self, limits: Limits = Limits(), env: dict | None = None, name: str = "worker",
                 modules: tuple = ("translator.",)):
        self.limits = limits
        self.modules = modules  # module prefixes whose functions the child may call
        self.env = env
        self.name = name
        self.proc = None
        self.out = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _start(self):
        req_r, req_w = os.pipe()
        res_r, res_w = os.pipe()
        self.out = tempfile.TemporaryFile(prefix="n2c-child-")
        env = scrubbed_env(self.env, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        cmd = [sys.executable, "-c", "import translator.sandbox as s; s.serve()", str(req_r), str(res_w),
               ",".join(self.modules)]
        self.proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=self.out, stderr=self.out,
                                     pass_fds=(req_r, res_w), preexec_fn=_preexec(self.limits))
        os.close(req_r)
        os.close(res_w)
        self.req, self.res = req_w, res_r

    def output(self) -> str:
        """What the child has printed (its stdout and stderr: a kernel's printf, a crash message)."""
        if self.out is None:
            return ""
        self.out.seek(0)
        return self.out.read()[-65536:].decode(errors="replace")

    def call(self, target: str, args: dict | None = None, arrays: list = (), timeout: float | None = None):
        """(result header, result arrays) of TARGET(args, arrays) in the child; ChildFailed if it died."""
        if self.proc is None or self.proc.poll() is not None:
            self.close()
            self._start()
        deadline = time.monotonic() + (timeout or self.limits.wall_seconds)
        try:
            write_all(self.req, encode({"target": target, "args": args or {}}, list(arrays)))
            header, out = read_frame(self.res, deadline)
        except TimeoutError:
            self._kill()
            raise ChildFailed(f"the {self.name} timed out after {timeout or self.limits.wall_seconds:g} s",
                              self.output()) from None
        except ValueError as exc:  # not a frame we wrote: code in the child wrote to the pipe
            self._kill()
            raise ChildFailed(f"the {self.name} sent an unreadable answer ({exc})", self.output()) from None
        except (EOFError, OSError):
            rc = self._reap(max(0.5, min(10.0, deadline - time.monotonic())))
            why = describe_exit(rc) if rc is not None else "stopped answering"
            raise ChildFailed(f"the {self.name} {why}", self.output()) from None
        if "error" in header:
            raise ChildError(header["error"], header.get("kind", "Exception"))
        return header.get("result"), out

    def _reap(self, seconds: float = 10.0):
        """The child's exit status once it has exited (it closed its pipe), waiting at most SECONDS, then killing
        it: a child that closes its pipe and goes on running must not hold the caller past its deadline."""
        try:
            return self.proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            self._kill()
            return None
        finally:
            self._close_pipes()

    def _kill(self):
        if self.proc is not None:
            _kill_group(self.proc)
            with contextlib.suppress(Exception):
                self.proc.wait(timeout=10)
        self._close_pipes()

    def _close_pipes(self):
        for fd in ("req", "res"):
            with contextlib.suppress(Exception):
                os.close(getattr(self, fd))
            setattr(self, fd, -1)

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self._kill()
        elif self.proc is not None:
            self._close_pipes()
        self.proc = None


class ChildError(Exception):
    """The called function raised in the child (a Python exception, not a death): its message and type name."""

    def __init__(self, message: str, kind: str):
        self.kind = kind
        super().__init__(message)


def serve() -> None:
    """The child's loop: read a call, run it, answer; until the parent closes the pipe."""
    import importlib

    req, res = int(sys.argv[1]), int(sys.argv[2])
    allowed = tuple(p for p in sys.argv[3].split(",") if p)
    try:
        import ctypes

        libc_fflush = ctypes.CDLL(None).fflush  # C stdio (a kernel's printf) goes to our file before we answer
    except Exception:  # noqa: BLE001
        libc_fflush = None
    while True:
        try:
            header, arrays = read_frame(req)
        except EOFError:
            return
        target = header["target"]
        module, _, func = target.partition(":")
        try:
            if not module.startswith(allowed):
                raise ValueError(f"{target}: not among the functions this worker may run")
            result, out = getattr(importlib.import_module(module), func)(header["args"], arrays)
            frame = encode({"result": result}, out)
        except BaseException as exc:  # noqa: BLE001 - every failure goes back to the parent as data
            frame = encode({"error": str(exc), "kind": type(exc).__name__}, [])
        sys.stdout.flush()
        sys.stderr.flush()
        if libc_fflush is not None:
            libc_fflush(None)
        write_all(res, frame)
