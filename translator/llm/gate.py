"""an assembled .cu with a model's kernel -> the gate's verdict: CPU-runtime build, nvcc when present, and verify in a child process.

The model's code runs in-process on the CPU runtime (ctypes) under `verify`, so a wrong kernel could
crash the process (a wild write) or never finish (an endless loop). On Linux the verification runs in
a forked child, killed when the run's time budget is spent: a crash or a hang is one more failed
attempt with a clear reason, not a dead or stuck numba2cuda. Elsewhere it runs in-process.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError
from ..lower.program import Options
from ..verify.run import verify  # here, not in the child: a forked child must not need the import lock

COMPILE_ERROR_LINES, COMPILE_ERROR_CHARS = 40, 3000
_REFERENCES: dict = {}  # module content + options -> verify's reference runs, reused by every attempt of a process


@dataclass
class Outcome:
    ok: bool
    kind: str = ""  # answer | allow-list | compile | mismatch (prompts/repair.j2's cases)
    detail: object = None  # what the repair prompt shows
    summary: str = ""  # one line for the user
    text: str = ""  # the verified .cu


def compile_gate(text: str, stem: str, seconds_left: float) -> Outcome | None:
    """None when TEXT builds for the CPU runtime and, if nvcc is on PATH, for sm_80 too."""
    from ..runtime.cpurun import CpuBuildError, compile_cpu

    try:
        compile_cpu(text, name=stem)
    except CpuBuildError as exc:
        return compile_failure(exc.output, "g++ against the CPU runtime")
    nvcc = shutil.which("nvcc") if os.environ.get("NUMBA2CUDA_LLM_NVCC", "1") != "0" else None
    if nvcc:
        with tempfile.TemporaryDirectory(prefix="n2c-llm-") as tmp:
            (Path(tmp) / f"{stem}.cu").write_text(text, encoding="utf-8")
            try:
                proc = subprocess.run([nvcc, "-c", f"{stem}.cu", "-o", os.devnull, "-arch=sm_80"], cwd=tmp,
                                      capture_output=True, text=True, timeout=max(30.0, seconds_left))
            except subprocess.TimeoutExpired:
                return compile_failure("nvcc did not finish", "nvcc")
        if proc.returncode != 0:
            return compile_failure(proc.stderr + proc.stdout, "nvcc")
    return None


def compile_failure(output: str, compiler: str) -> Outcome:
    lines = [line for line in output.strip().splitlines() if line.strip()][:COMPILE_ERROR_LINES]
    text = "\n".join(lines)[:COMPILE_ERROR_CHARS]
    first = next((line for line in lines if "error" in line), lines[0] if lines else "no output")
    return Outcome(False, "compile", text, f"does not compile ({compiler}): {first.strip()[:200]}")


def verify_gate(path: str, text: str, options: Options, kernel: str, seconds_left: float) -> Outcome:
    """EQUIVALENT (ok) or the first failing case of KERNEL, as the repair prompt wants it."""
    memo = (hashlib.sha256(Path(path).read_bytes()).hexdigest(), str(Path(path).resolve()),
            repr(sorted(options.specialize.items())), tuple(options.kernels), repr(sorted(options.types.items())))
    kind, value = _isolated(_verify_summary, max(seconds_left, 1.0), path, text, options, _REFERENCES.get(memo))
    if kind == "user":
        raise UserError(value)  # a problem of the module (example() fails, ...), not of the answer
    if kind != "ok":
        return Outcome(False, "mismatch", dict(case="every case", problem=value, more=""), f"NOT EQUIVALENT: {value}")
    _REFERENCES[memo] = value["reference"]
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


def _verify_summary(path, text, options, reference) -> dict:
    result = verify(path, cu_text=text, options=options, reference=reference)
    kernels = sorted({c.kernel for c in result.cases})
    # a case is NOT EQUIVALENT (problems) or UNDECIDED (why its reference cannot decide); the verdict may also
    # rest on the translation as a whole (a static check), or on no case at all
    bad = [dict(kernel=c.kernel, problem=(c.problems + c.undecided)[0],
                case=f"kernel {c.kernel}, seed {c.seed}, size {c.size}, grid {c.griddim}, block {c.blockdim}, "
                     f"shared {c.shared} B") for c in result.cases if not c.ok]
    bad += [dict(kernel=kernels[0] if kernels else "", problem=p, case="the translation as a whole")
            for p in result.problems]
    if not result.ok and not bad:
        bad.append(dict(kernel="", problem="no case could be checked: " + ("; ".join(result.notes) or "none ran"),
                        case="every case"))
    return dict(ok=result.ok, cases=len(result.cases), kernels=kernels, bad=bad, reference=result.reference)


def _isolated(fn, seconds: float, *args):
    """("ok", fn(*args)) | ("user", text) | ("crash"|"timeout"|"error", why), fn run in a forked child on Linux."""
    if sys.platform != "linux" or "fork" not in multiprocessing.get_all_start_methods():
        try:
            return "ok", fn(*args)
        except UserError as exc:
            return "user", exc.text
    ctx = multiprocessing.get_context("fork")
    receiver, sender = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(sender, fn, args), daemon=True)
    child.start()
    sender.close()
    try:
        if not receiver.poll(seconds):
            child.kill()
            return "timeout", (f"the verification did not finish within the {seconds:.0f} s left of the time budget "
                               "(an endless loop, or a barrier not every thread reaches?)")
        try:
            return receiver.recv()
        except EOFError:
            child.join(5)
            code = child.exitcode
            name = signal.Signals(-code).name if code is not None and code < 0 else f"exit {code}"
            return "crash", (f"the kernel crashed the CPU runtime ({name}): it reads or writes outside its arrays, or "
                             "past the end of shared memory")
    finally:
        receiver.close()
        if child.is_alive():
            child.kill()
        child.join(5)


def _child(sender, fn, args) -> None:
    import faulthandler

    faulthandler.disable()  # a crash here is the model's, and the parent reports it in one line
    try:
        sender.send(("ok", fn(*args)))
    except UserError as exc:
        sender.send(("user", exc.text))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent as the attempt's failure
        sender.send(("error", f"the verification failed: {type(exc).__name__}: {exc}"))
    finally:
        sender.close()
        os._exit(0)  # no atexit handlers, no flushing of the parent's inherited buffers twice
