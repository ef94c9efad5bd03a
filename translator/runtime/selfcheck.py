"""an emitted .cu -> compiled once before `translate` reports success: CUDA C that the compiler rejects is a defect
of numba2cuda (never the user's), reported at the Python line it came from, with exit code 70.

nvcc compiles the file as it will be built (`nvcc -c`, about a second); without nvcc, g++ checks it against the
CPU runtime's header (runtime/n2c_cpu.h), which is how `numba2cuda verify` runs it without a GPU. A file that
passed is remembered by content (a marker under the numba2cuda cache), so translating it again costs nothing.
Neither compiler present: nothing to check with, and `translate` says so on stderr.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..build.plan import cache_root
from ..sandbox import ChildFailed, Limits, run_command
from .cpurun import CPU_INCLUDE, HEADER, gpu_only

CHECK_SECONDS = 180
_LINE_COMMENT = re.compile(r"//\s*([^\s:]+\.py):(\d+)\s*$")
_NVCC_ERROR = re.compile(r"^(?P<file>[^\s(]+)\((?P<line>\d+)\): (?:catastrophic )?error: (?P<msg>.*)$")
_GCC_ERROR = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+):(?:\d+:)? (?:fatal )?error: (?P<msg>.*)$")


_LINKED = re.compile(r"^// ---- (?P<what>.+?), linked by cuda\.declare_device \(link=\)")
_UNRESOLVED = re.compile(r"Unresolved extern function '(?P<name>\w+)'")


@dataclass
class CompileProblem:
    cu_line: int
    message: str
    py_line: int | None  # the Python line the .cu line was translated from, where it says
    linked: str | None = None  # the user's CUDA source a declare_device links, where the problem is in it


@dataclass
class CheckOutcome:
    compiler: str  # "nvcc", "g++ (CPU runtime)", or "" when none was found
    problems: list  # CompileProblem; empty: it compiles
    output: str = ""
    cached: bool = False
    skipped: str = ""  # why a translation was not compiled though a compiler is here

    @property
    def ok(self) -> bool:
        return not self.problems


def _compiler():
    """(label, argv prefix, identity for the cache key) of the compiler to check with, or None."""
    try:
        from ..build.toolchain import cuda_home

        nvcc = os.path.join(cuda_home(), "bin", "nvcc")
    except Exception:  # noqa: BLE001 - no CUDA toolkit: fall back to the host compiler
        nvcc = None
    if nvcc and os.access(nvcc, os.X_OK):
        # 549, "variable is used before its value is set", is only a warning to nvcc, but in a translation it
        # is always a translator defect (a for-header's counter initialised from the variable it hides)
        return "nvcc", [nvcc, "-c", "-x", "cu", "-std=c++17", "-w", "--diag-error", "549", "-o", "translation.o"], \
            _stamp(nvcc)
    cxx = shutil.which(os.environ.get("CXX", "g++"))
    if cxx:
        # the runtime's stand-ins for the CUDA headers a translation includes (cuda_fp16.h, cuda_bf16.h) too
        headers = b"".join(p.read_bytes() for p in [HEADER, *sorted(CPU_INCLUDE.glob("*.h"))])
        return "g++ (CPU runtime)", [cxx, "-std=c++17", "-fsyntax-only", "-w", "-x", "c++", "-I", str(CPU_INCLUDE),
                                     "-include", str(HEADER)], _stamp(cxx) + hashlib.sha256(headers).hexdigest()
    return None


def _stamp(path: str) -> str:
    st = os.stat(os.path.realpath(path))
    return f"{os.path.realpath(path)}:{st.st_size}:{st.st_mtime_ns}"


def instantiations(program) -> str:
    """A kernel made per call (frontend/percall.py) is a C++ template, whose code a compiler checks only where it
    is instantiated: lines that instantiate each launcher (every value 1, an extent any shape allows), appended
    to the text the check compiles, not to the .cu."""
    lines = [f"static auto *const n2c_check_{k}_{fn.c_name} = &{fn.c_name}_launch<{', '.join('1' for _ in fn.per_call)}>;"
             for k, fn in enumerate(program.kernels) if getattr(fn, "per_call", None)]
    return "\n".join(["", *lines, ""]) if lines else ""


def check_cu(text: str, source_name: str = "", program=None) -> CheckOutcome:
    """Compile TEXT (a .cu from render_program, of PROGRAM); the problems, each mapped to its Python line."""
    if program is not None:
        text += instantiations(program)
    compiler = _compiler()
    if compiler is None:
        return CheckOutcome("", [])
    label, argv, identity = compiler
    if label != "nvcc" and gpu_only(text):  # only nvcc has the header; the CPU runtime's stand-ins lack it
        return CheckOutcome("", [], skipped=f"the translation runs on a GPU only: {gpu_only(text)}")
    if label == "nvcc" and "#include <cuda_bf16.h>" in text:
        # sm_80: where cuda_bf16.h declares its arithmetic (numba-cuda compiles bfloat16 code for such devices);
        # at nvcc's default architecture __hfma(__nv_bfloat16, ...) is ambiguous. Only here: it costs a fifth more
        argv = [*argv[:1], "-arch=sm_80", *argv[1:]]
    key = hashlib.sha256("\0".join([identity, " ".join(argv[1:]), text]).encode()).hexdigest()
    marker = cache_root() / "selfcheck" / key[:32]
    if marker.exists():
        return CheckOutcome(label, [], cached=True)
    with tempfile.TemporaryDirectory(prefix="n2c-check-") as tmp:
        path = Path(tmp) / "translation.cu"
        path.write_text(text)
        try:
            proc = run_command([*argv, str(path)], limits=Limits(wall_seconds=CHECK_SECONDS, cpu_seconds=None,
                                                                  address_space=None), cwd=tmp)
        except ChildFailed as exc:
            return CheckOutcome(label, [CompileProblem(0, f"{label} did not finish: {exc.reason}", None)], exc.output)
    if proc.returncode == 0:
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(label + "\n")
        except OSError:
            pass  # an unwritable cache only costs the next check its second
        return CheckOutcome(label, [])
    problems = parse_errors(proc.stdout, text)
    mine = [p for p in problems if not (p.linked and "used before its value is set" in p.message)]
    if problems and not mine:  # 549 made an error for the translation's sake; in the user's linked code, a warning
        return CheckOutcome(label, [])
    if not problems:
        last = (proc.stdout.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        problems = [CompileProblem(0, last, None, _unresolved_in_linked(last, text))]
    return CheckOutcome(label, problems, proc.stdout)


def _linked_block(cu_lines: list[str], line: int) -> str | None:
    """Where in the user's linked source (`cuda.CUSource at k.py:3`, `helpers.cu`) .cu line LINE is ("line 2 of
    helpers.cu"), or None where it is not in one."""
    for k in range(min(line, len(cu_lines)) - 1, -1, -1):
        if cu_lines[k].startswith("// ---- end of ") and k < line - 1:
            return None
        m = _LINKED.match(cu_lines[k])
        if m:
            return f"line {line - k - 1} of {m.group('what')}" if line - k - 1 > 0 else m.group("what")
    return None


def _undefined_foreign(message: str, text: str) -> str | None:
    """nvcc's 'identifier "f" is undefined' where f is a cuda.declare_device function: no linked source defines
    it (Numba's link fails too); what the user declared, named, else None."""
    m = re.search(r'identifier "(\w+)" is undefined', message)
    if m and f'// cuda.declare_device("{m.group(1)}")' in text:
        return f'cuda.declare_device("{m.group(1)}"), which no source it links defines'
    return None


def _unresolved_in_linked(message: str, text: str) -> str | None:
    """ptxas's "Unresolved extern function 'f'" where f is declared by the user's linked source and defined by
    none: the linked code's own gap (Numba's link fails on it too), named by that source."""
    m = _UNRESOLVED.search(message)
    if m is None:
        return None
    lines = text.splitlines()
    for k, line in enumerate(lines, start=1):
        if re.search(rf"\b{m.group('name')}\s*\(", line):
            where = _linked_block(lines, k)
            if where is not None:
                return where.partition(" of ")[2] or where
    return None


def parse_errors(output: str, text: str) -> list[CompileProblem]:
    """The compiler's errors on the .cu, with the Python line each .cu line names."""
    cu_lines = text.splitlines()
    out = []
    for raw in output.splitlines():
        m = _NVCC_ERROR.match(raw.strip()) or _GCC_ERROR.match(raw.strip())
        if m is None or not m.group("file").endswith("translation.cu"):
            continue
        line = int(m.group("line"))
        problem = CompileProblem(line, m.group("msg").strip(), python_line(cu_lines, line),
                                 _linked_block(cu_lines, line) or _undefined_foreign(m.group("msg"), text))
        if problem not in out:
            out.append(problem)
    return out


def python_line(cu_lines: list[str], line: int) -> int | None:
    """The `// file.py:LINE` of a .cu line: on the line itself, else the nearest one above it."""
    for k in range(min(line, len(cu_lines)) - 1, -1, -1):
        m = _LINE_COMMENT.search(cu_lines[k])
        if m:
            return int(m.group(2))
    return None


def linked_code_report(outcome: CheckOutcome, path: str) -> str | None:
    """The message where every problem is in CUDA source the user links (cuda.declare_device's link=): their code,
    which Numba's build rejects as well, not a numba2cuda defect; None where any is the translation's."""
    if not outcome.problems or any(p.linked is None for p in outcome.problems):
        return None
    out = []
    for p in outcome.problems[:6]:
        at = re.search(r"at (\S+\.py):(\d+)$", p.linked)  # cuda.CUSource at k.py:3: its call's line
        where = f"{path}:{at.group(2)}:1" if at else path
        out.append(f"{where}: error: linked CUDA source ({p.linked}): {outcome.compiler} rejects it: {p.message}")
    out.append("    hint: Numba compiles and links this source too, and fails the same way: fix it (define every "
               "function it calls, or link the source that does)")
    return "\n".join(out)


def defect_report(outcome: CheckOutcome, path: str, source_lines: list[str]) -> str:
    """The message for a translation the compiler rejected: a numba2cuda defect, located in the Python."""
    out = []
    for p in outcome.problems[:6]:
        where = path
        if p.py_line and 0 < p.py_line <= len(source_lines):  # the statement's column: where its text starts
            text = source_lines[p.py_line - 1]
            where = f"{path}:{p.py_line}:{len(text) - len(text.lstrip()) + 1}"
        out.append(f"{where}: internal error: numba2cuda translated this into CUDA C that {outcome.compiler} rejects "
                   f"(.cu line {p.cu_line}: {p.message})")
        if p.py_line and 0 < p.py_line <= len(source_lines):
            out.append("    " + source_lines[p.py_line - 1].rstrip())
    more = len(outcome.problems) - 6
    if more > 0:
        out.append(f"    ... and {more} more")
    out.append("    hint: this is a bug in numba2cuda, not in your kernel: please report it with the file; "
               "translate with --no-check to write the .cu anyway, or use the LLM backend for this kernel")
    return "\n".join(out)
