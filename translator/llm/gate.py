"""an assembled .cu with a model's kernel -> the gate's verdict: the CPU-runtime build, nvcc when present, and verify,
each in a sandboxed child bounded by what is left of the run's time budget.

The model's code is untrusted (its answer passed the allow-list, but defence does not stop there):
numba2cuda never compiles it, loads it or runs it in its own process. g++ and nvcc run under
sandbox.run_command (no secrets in their environment, CPU, memory and file-size limits, killed at the
budget's end: a template that recurses forever at compile time is one failed attempt). The CPU build's
load-time code (.init_array and friends) must be no more than the runtime's own: a constructor the
allow-list missed is refused before anything loads the library. The
verification runs in a sandbox.Worker, a fresh process (not a fork: it holds no copy of the key) with
NUMBA2CUDA_CONFINE=1, so the process that loads the model's library is confined first (confine.py);
the library's printf output stays in the child. A crash, a timeout or a forbidden system call is one
more failed attempt, reported with its signal; the parent never dies and never waits past the budget.
The reference (the Numba original on the module's example(), which does not depend on the answer) is
computed once per module, in a child of its own, and reused by every attempt.
"""

from __future__ import annotations

import base64
import hashlib
import os
import pickle
import re
import shutil
import struct
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError
from ..lower.program import Options
from ..runtime.cpurun import CpuBuildError, build_cpu
from ..sandbox import ChildError, ChildFailed, Limits, Worker, run_command

COMPILE_ERROR_LINES, COMPILE_ERROR_CHARS = 40, 3000
OUTPUT_LINES = 6  # of a dead child's own output, in the attempt's report
_REFERENCES: dict = {}  # module content + options -> the reference cases, reused by every attempt of a process


@dataclass
class Outcome:
    ok: bool
    kind: str = ""  # answer | allow-list | compile | mismatch (prompts/repair.j2's cases)
    detail: object = None  # what the repair prompt shows
    summary: str = ""  # one line for the user
    text: str = ""  # the verified .cu


def limits(seconds: float, memory: int | None = 8 << 30) -> Limits:
    """A child's limits for SECONDS of the budget: wall and CPU time, memory, no core file, bounded files."""
    seconds = max(seconds, 0.1)
    return Limits(wall_seconds=seconds, cpu_seconds=int(seconds) + 1, address_space=memory, file_size=256 << 20)


def compile_gate(text: str, stem: str, seconds_left: float) -> Outcome | None:
    """None when TEXT builds for the CPU runtime and, if nvcc is on PATH, for sm_80 too; both in sandboxed
    children killed when SECONDS_LEFT are spent."""
    deadline = _Deadline(seconds_left)
    if deadline.left() <= 0:
        return budget_spent()
    try:
        lib = build_cpu(text, name=stem, limits=limits(deadline.left(), 4 << 30))
    except CpuBuildError as exc:
        return compile_failure(exc.output, "g++ against the CPU runtime")
    grown = load_time_code(lib, deadline)
    if grown:
        problem = (f"the compiled code runs something when its library is loaded ({grown}: more than numba2cuda's "
                   "own file has): no namespace-scope object with a constructor or destructor, no initialiser "
                   "that calls a function")
        return Outcome(False, "allow-list", [problem], f"rejected: {problem}")
    nvcc = shutil.which("nvcc") if os.environ.get("NUMBA2CUDA_LLM_NVCC", "1") != "0" else None
    if nvcc:
        if deadline.left() <= 0:
            return budget_spent()
        with tempfile.TemporaryDirectory(prefix="n2c-llm-") as tmp:
            (Path(tmp) / f"{stem}.cu").write_text(text, encoding="utf-8")
            try:
                proc = run_command([nvcc, "-c", f"{stem}.cu", "-o", f"{stem}.o", "-arch=sm_80"], cwd=tmp,
                                   limits=limits(deadline.left(), None))
            except ChildFailed as exc:
                return compile_failure(f"nvcc: {exc.reason}\n{exc.output}", "nvcc")
        if proc.returncode != 0:
            return compile_failure(proc.stdout, "nvcc")
    return None


LOAD_TIME_SECTIONS = (".preinit_array", ".init_array", ".ctors", ".fini_array", ".dtors")


def load_time_code(lib: Path, deadline: "_Deadline") -> str:
    """What LIB runs when loaded or unloaded beyond what the CPU runtime alone runs (`.init_array: 2 entries, not
    1`); "" if nothing, or if it cannot be told (not a 64-bit little-endian ELF, no baseline). The compiler's own
    account of constructors: it sees what any check of the source could miss."""
    try:
        base = build_cpu("", name="n2c_baseline", limits=limits(max(deadline.left(), 0.1), 4 << 30))
    except CpuBuildError:
        return ""
    have, want = section_sizes(lib), section_sizes(base)
    if have is None or want is None:
        return ""
    grown = [f"{name}: {have.get(name, 0) // 8} entries, not {want.get(name, 0) // 8}" for name in LOAD_TIME_SECTIONS
             if have.get(name, 0) > want.get(name, 0)]
    return "; ".join(grown)


def section_sizes(path: Path) -> dict[str, int] | None:
    """{section name: size} of a 64-bit little-endian ELF file, or None."""
    try:
        data = Path(path).read_bytes()
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            return None
        (shoff,) = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + k * shentsize) for k in range(shnum)]
        names = headers[shstrndx][4]
        return {data[names + h[0]:data.index(b"\0", names + h[0])].decode("ascii", "replace"): h[5] for h in headers}
    except (OSError, struct.error, ValueError, IndexError):
        return None


def compile_failure(output: str, compiler: str) -> Outcome:
    lines = [line for line in output.strip().splitlines() if line.strip()][:COMPILE_ERROR_LINES]
    text = "\n".join(lines)[:COMPILE_ERROR_CHARS]
    first = next((line for line in lines if "error" in line or "timed out" in line or "killed" in line),
                 lines[0] if lines else "no output")
    return Outcome(False, "compile", text, f"does not compile ({compiler}): {first.strip()[:200]}")


def budget_spent() -> Outcome:
    return Outcome(False, "mismatch", dict(case="every case", problem="the time budget is spent", more=""),
                   "stopped: the time budget is spent (--llm-budget)")


def verify_gate(path: str, text: str, options: Options, kernel: str, seconds_left: float) -> Outcome:
    """EQUIVALENT (ok) or the first failing case of KERNEL, as the repair prompt wants it."""
    deadline = _Deadline(seconds_left)
    try:
        metas, arrays = reference_cases(path, options, deadline)
    except ChildFailed as exc:
        if "timed out" in exc.reason:
            return budget_spent()
        raise UserError(f"{Path(path).name}: error: running the module's example() for the reference failed: the "
                        f"child running it {exc.reason.removeprefix('the reference run ')}") from None
    if deadline.left() <= 0:
        return budget_spent()
    env = {**os.environ, "NUMBA2CUDA_CONFINE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    args = dict(path=str(path), cu_text=text, options=_pack(options), reference=metas)
    with Worker(limits=limits(deadline.left()), env=env, name="verification") as worker:
        try:
            value, _ = worker.call("translator.llm.gate_child:verify", args, arrays, timeout=deadline.left())
        except ChildFailed as exc:
            return _died(exc, worker.output(), deadline)
        except ChildError as exc:
            message = printable(str(exc))  # from a process that ran the model's code: no escape sequences
            if exc.kind == "UserError":
                raise UserError(message) from None  # a problem of the module (example() fails, ...), not the answer
            return Outcome(False, "mismatch", dict(case="every case", problem=f"the verification failed: {message}",
                                                   more=""), f"NOT EQUIVALENT: the verification failed: {message}")
    if kernel not in value["kernels"]:
        raise UserError(f"{Path(path).name}: error: example() runs {', '.join(value['kernels']) or 'no kernel'}, not "
                        f"'{kernel}': the model's translation of '{kernel}' cannot be verified, so it is not kept\n"
                        "    hint: give the module an example() that runs it")
    if value["ok"]:
        return Outcome(True, summary=f"EQUIVALENT ({value['cases']} cases verified against the Numba original)",
                       text=text)
    bad = value["bad"]
    first = next((b for b in bad if b["kernel"] == kernel), bad[0])
    more = f"{len(bad)} of {value['cases']} cases fail" if len(bad) > 1 else ""
    return Outcome(False, "mismatch", dict(case=first["case"], problem=first["problem"], more=more),
                   f"NOT EQUIVALENT: {first['case']}: {first['problem']}")


def _died(exc: ChildFailed, output: str, deadline: "_Deadline") -> Outcome:
    if "timed out" in exc.reason:
        why = (f"the verification did not finish within the {deadline.seconds:.0f} s left of the time budget (an "
               "endless loop, or a barrier not every thread reaches?)")
    else:
        why = (f"the kernel crashed the CPU runtime: the child running it was {exc.reason.split(' ', 2)[-1]}; it "
               "reads or writes outside its arrays, or past the end of shared memory, or does what device code may "
               "not")
    tail = [line[:200] for line in output.strip().splitlines()[-OUTPUT_LINES:] if line.strip()]
    if tail:
        why += "; its last output: " + " | ".join(printable(line) for line in tail)
    return Outcome(False, "mismatch", dict(case="every case", problem=why, more=""), f"NOT EQUIVALENT: {why}")


def reference_cases(path: str, options: Options, deadline: "_Deadline") -> tuple[list, list]:
    """(case metadata, arrays) of the Numba original on example(), run once per module and options, in a child."""
    memo = (hashlib.sha256(Path(path).read_bytes()).hexdigest(), str(Path(path).resolve()),
            repr(sorted(options.specialize.items())), tuple(options.kernels), repr(sorted(options.types.items())))
    if memo not in _REFERENCES:
        with Worker(limits=limits(deadline.left(), None), name="reference run") as worker:
            try:
                metas, arrays = worker.call("translator.llm.gate_child:reference", dict(path=str(path), options=_pack(options)),
                                            timeout=deadline.left())
            except ChildError as exc:
                raise UserError(printable(str(exc))) from None
        _REFERENCES[memo] = (metas, arrays)
    return _REFERENCES[memo]


def printable(text: str) -> str:
    """TEXT with control characters (terminal escape sequences) and non-ASCII shown as escapes; newlines kept."""
    return re.sub(r"[^\n\x20-\x7e]", lambda m: ascii(m.group())[1:-1], text)


def _pack(obj) -> str:
    """Options for the child, which trusts its parent (never the other way: the child answers in JSON and .npy)."""
    return base64.b64encode(pickle.dumps(obj)).decode()


class _Deadline:
    def __init__(self, seconds: float):
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()
