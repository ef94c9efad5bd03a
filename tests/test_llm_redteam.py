"""The red team: hostile answers (tests/llm_fixtures/hostile/*.md) served to `numba2cuda translate --backend llm` by a
real OpenAI-compatible server on loopback (tests/llm_server.py).

Each fixture is an answer for kernels/exponent_histogram.py whose first line says what the allow-list must name
(`expect`) and what its hostile code does when nothing stops it (`effect`): `load` runs host code when the
library is loaded (a constructor, an .init_array entry), `launch` when the kernel runs, `crash` kills the process
that loads or runs it, `hang` never returns, `compile` never finishes compiling (it passes the allow-list: the
compile timeout stops it), `key` echoes the API key, `none` is refused for how it is written. @PWNED@ is a file
the hostile code creates: the proof that host code ran.

- test_each_construct_is_named: the allow-list's message names the hostile construct (a repairable failure).
- test_control_*: the hostile code really does what it claims when built and loaded without numba2cuda's checks
  (so the other tests could fail).
- test_hostile_answer_end_to_end: the whole command, as a user runs it, with the key in its environment: exit
  code, wall time within --llm-budget, no @PWNED@, no signal, nothing of the key in any file it leaves.
- test_the_binary_check_without_the_allow_list: the allow-list switched off, the compiled library's load-time
  code (.init_array) still gives a constructor away before anything loads it.
- test_defence_in_depth_without_the_allow_list: the allow-list and the binary check switched off, so the hostile
  code is compiled and loaded: it runs only in the gate's confined child, which cannot write the file, start a
  program or signal the parent; numba2cuda itself (this very pytest process) survives crashes and hangs, and
  the child's output never reaches numba2cuda's.
"""

from __future__ import annotations

import os
import platform
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llm_server import ScriptedServer
from translator.cli import main
from translator.frontend.module import parse_source
from translator.llm import backend, gate
from translator.llm.check import check_code, extract_code
from translator.llm.facts import make_job, reserved_names
from translator.lower.program import Options
from translator.lower.shells import assemble, rejected_kernels
from translator.emit.render import render_program
from translator.runtime.cpurun import build_cpu

ROOT = Path(__file__).resolve().parent.parent
KERNEL = ROOT / "kernels" / "exponent_histogram.py"
HOSTILE = Path(__file__).resolve().parent / "llm_fixtures" / "hostile"
KEY = "sk-n2c-redteam-4c1f9a7e02b35d68-must-never-be-on-disk"
MODEL = "scripted-hostile"
SIGNATURE = ("__global__ void exponent_histogram(const float *x, int64_t x_shape0, float *mantissa, "
             "int64_t mantissa_shape0, int *hist, int64_t hist_shape0)")
X86_ONLY = {"asm_syscall_in_kernel", "asm_top_level_init_array", "fork_exec_via_syscall"}  # syscall numbers, .quad


def fixtures() -> dict[str, tuple[str, str]]:
    """{name: (expected message, effect)} of every hostile answer."""
    out = {}
    for path in sorted(HOSTILE.glob("*.md")):
        head = path.read_text(encoding="utf-8").split("\n", 1)[0]
        m = re.fullmatch(r"<!-- expect: (.*?) ; effect: (\w+) -->", head)
        assert m, f"{path.name}: the first line must be <!-- expect: ... ; effect: ... -->"
        out[path.stem] = (m.group(1), m.group(2))
    return out


FIXTURES = fixtures()
POTENT = [n for n, (_, effect) in FIXTURES.items() if effect in ("load", "launch", "crash", "hang")]


def answer(name: str, pwned: Path, key: str = KEY) -> str:
    """The fixture as the server sends it: its placeholders filled in."""
    with open(HOSTILE / f"{name}.md", encoding="utf-8", newline="") as f:
        text = f.read()
    half = len(key) // 2
    return (text.replace("@PWNED@", str(pwned)).replace("@KEYHEAD@", key[:half]).replace("@KEYTAIL@", key[half:])
            .replace("@KEY@", key))


def key_pieces(key: str = KEY, window: int = 12) -> list[bytes]:
    """Every run of WINDOW characters of the key: none may be on disk."""
    return [key[k:k + window].encode() for k in range(len(key) - window + 1)]


def files_holding_the_key(*roots: Path) -> list[str]:
    found = []
    for root in roots:
        for f in Path(root).rglob("*"):
            if f.is_file() and not f.is_symlink():
                data = f.read_bytes()
                if any(piece in data for piece in key_pieces()):
                    found.append(str(f))
    return found


def test_the_red_team_is_complete():
    """Every kind of host code the issue lists has a fixture (a missing file would silently shrink the set)."""
    assert len(FIXTURES) >= 60
    must = ["ctor_constant_object", "ctor_device_object", "static_local_object", "lambda_at_namespace_scope",
            "template_static_member", "global_initialiser_calls_function", "attribute_via_define",
            "attribute_via_digraph_define", "attribute_via_trigraph_define", "attribute_spliced", "pragma_operator",
            "asm_spellings", "asm_top_level_init_array", "host_device_function", "extern_c_system", "operator_new",
            "friend_function", "std_system", "fork_exec_via_syscall", "key_in_string", "compile_constexpr_loop",
            "compile_template_explosion", "key_in_comment", "trap_in_constructor", "endless_constructor",
            "ctor_constant_object_measured"]
    assert not [m for m in must if m not in FIXTURES]


# ------------------------------------------------------------------ the allow-list names each construct


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_each_construct_is_named(name, tmp_path):
    expect, effect = FIXTURES[name]
    code = extract_code(answer(name, tmp_path / "pwned"))
    problems = check_code(code, SIGNATURE, {"exponent_histogram", "exponent_histogram_launch", "n2c_launch"},
                          {"EMIN", "NBINS"})
    if expect:
        assert any(expect in p for p in problems), problems
    else:  # compile bombs and correct code that echoes the key: later layers deal with them
        assert problems == []


# ------------------------------------------------------------------ controls: the hostile code is potent


def unchecked_cu(code: str) -> str:
    """The .cu the gate would build around CODE, made without the allow-list."""
    info = parse_source(KERNEL.read_text(), str(KERNEL))
    options = Options()
    rejected = rejected_kernels(info, options)
    program, shells = assemble(info, options, rejected)
    job = make_job(info, shells[0], options, rejected[shells[0].c_name], reserved_names(program))
    shells[0].external_code = backend.answer_header(KERNEL.name, job, MODEL, code) + code
    program.helpers |= backend.helpers_called(code)
    return render_program(program, KERNEL.name)


RUN_UNCHECKED = """
import ctypes, sys
import numpy as np
from translator.runtime.cpurun import launch, load_library
lib = load_library(sys.argv[1])
if sys.argv[2] != "load":
    x = np.linspace(-4, 4, 64).astype(np.float32)
    m, h, n = np.zeros(64, np.float32), np.zeros(48, np.int32), ctypes.c_int64
    launch(lib, "exponent_histogram", 2, 32, 0, x, 64, m, 64, h, 48, argtypes=[None, n, None, n, None, n])
print("done")
"""


@pytest.mark.needs("g++")
@pytest.mark.slow
@pytest.mark.parametrize("name", POTENT)
def test_control_the_hostile_code_runs_when_unchecked(name, tmp_path):
    if name in X86_ONLY and platform.machine() != "x86_64":
        pytest.skip("x86-64 assembly and syscall numbers")
    _, effect = FIXTURES[name]
    pwned = tmp_path / "pwned"
    cu = tmp_path / "unchecked.cu"
    cu.write_text(unchecked_cu(extract_code(answer(name, pwned))))
    lib = build_cpu(cu.read_text(), name="exponent_histogram", cache_dir=tmp_path / "cpu")  # it compiles
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("NUMBA2CUDA_CONFINE", None)
    try:
        proc = subprocess.run([sys.executable, "-c", RUN_UNCHECKED, str(lib), effect], env=env,
                              capture_output=True, text=True, timeout=60 if effect != "hang" else 8)
    except subprocess.TimeoutExpired:
        assert effect == "hang"
        return
    if effect == "crash":
        assert proc.returncode == -signal.SIGILL, proc.stderr
    else:
        assert effect in ("load", "launch")
        assert pwned.exists(), f"the hostile code did not run (exit {proc.returncode}): {proc.stderr[-2000:]}"


@pytest.mark.needs("g++")
@pytest.mark.slow
def test_control_a_compile_bomb_outlasts_a_short_compile(tmp_path):
    """compile_constexpr_loop really keeps g++ busy: its 8 s here end in a timeout, not an error."""
    from translator.runtime.cpurun import CpuBuildError
    from translator.sandbox import Limits

    cu = unchecked_cu(extract_code(answer("compile_constexpr_loop", tmp_path / "pwned")))
    t0 = time.monotonic()
    with pytest.raises(CpuBuildError, match="timed out"):
        build_cpu(cu, name="exponent_histogram", cache_dir=tmp_path / "cpu",
                  limits=Limits(wall_seconds=8, cpu_seconds=30))
    assert time.monotonic() - t0 < 15


# ------------------------------------------------------------------ end to end, as a user runs it


def budget_for(effect: str) -> int:
    # a compile bomb uses the whole budget (the compile's time limit is what it has left): 12 s show that as
    # well as 30 did, in less of CI's time
    return {"key": 90, "compile": 12}.get(effect, 30)


def end_to_end_params() -> list:
    """Every fixture; in CI (not -m full) only those that pass the allow-list (compile bombs, echoed keys: later
    layers stop them) and the first two of each other effect. The rest are refused by the allow-list, which
    test_each_construct_is_named checks for every fixture; end to end they cost CI ~2.7 s each for the same path."""
    seen: dict = {}
    params = []
    for name in sorted(FIXTURES):
        effect = FIXTURES[name][1]
        seen[effect] = seen.get(effect, 0) + 1
        everyday = effect in ("compile", "key") or seen[effect] <= 2
        params.append(pytest.param(name, id=name, marks=() if everyday else pytest.mark.full))
    return params


@pytest.mark.needs("g++")
@pytest.mark.slow
@pytest.mark.parametrize("name", end_to_end_params())
def test_hostile_answer_end_to_end(name, tmp_path):
    _, effect = FIXTURES[name]
    budget = budget_for(effect)
    pwned = tmp_path / "pwned"
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "NUMBA2CUDA_"))}
    env.update(PYTHONPATH=str(ROOT), OPENAI_API_KEY=KEY, NUMBA2CUDA_CACHE=str(tmp_path / "n2c"), TMPDIR=str(tmp))
    with ScriptedServer([{"content": answer(name, pwned)}]) as server:
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "translator.cli", "translate", str(KERNEL), "-o",
                               str(work / "out.cu"), "--backend", "llm", "--model", MODEL, "--base-url",
                               server.base_url, "--llm-cache", str(tmp_path / "llm-cache"), "--llm-attempts", "1",
                               "--llm-budget", str(budget)], cwd=work, env=env, capture_output=True, text=True,
                              timeout=budget + 30)
        seconds = time.monotonic() - t0
    report = f"exit {proc.returncode} after {seconds:.1f} s\n{proc.stderr[-3000:]}"
    assert proc.returncode >= 0, f"killed by a signal: {report}"
    assert proc.returncode in ((0, 1) if effect == "key" else (1,)), report
    assert seconds < budget, report
    assert not pwned.exists(), f"host code ran: {report}"
    assert server.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"  # the key was there to leak
    assert not [p for p in key_pieces() if p.decode() in proc.stdout + proc.stderr]
    assert not files_holding_the_key(tmp_path), report
    if effect != "key":
        assert "no verified translation" in proc.stderr and not (work / "out.cu").exists(), report
    if effect == "compile":
        assert "timed out" in proc.stderr or "time budget" in proc.stderr, report
    if proc.returncode == 0 and name != "key_in_prose":  # the key was in the code: its place shows it was there
        assert "<OPENAI_API_KEY>" in (work / "out.cu").read_text()


# ------------------------------------------------------------------ defence in depth: no allow-list at all

LOAD_TIME = ["ctor_constant_object_measured", "dtor_device_object", "asm_top_level_init_array",
             "attribute_section_init_array", "template_static_member", "lambda_at_namespace_scope",
             "global_initialiser_calls_function", "friend_function", "attribute_via_digraph_define",
             "comment_ended_by_carriage_return"]


@pytest.mark.needs("g++")
@pytest.mark.slow
@pytest.mark.parametrize("name", LOAD_TIME)
def test_the_binary_check_without_the_allow_list(name, tmp_path, monkeypatch, capfd):
    if name in X86_ONLY and platform.machine() != "x86_64":
        pytest.skip("x86-64 assembly")
    monkeypatch.setattr(backend, "check_code", lambda *a, **k: [])
    monkeypatch.setenv("NUMBA2CUDA_LLM_NVCC", "0")
    monkeypatch.setenv("NUMBA2CUDA_CACHE", str(tmp_path / "n2c"))
    monkeypatch.chdir(tmp_path)
    pwned = tmp_path / "pwned"
    with ScriptedServer([{"content": answer(name, pwned)}]) as server:
        rc = main(["translate", str(KERNEL), "-o", str(tmp_path / "out.cu"), "--backend", "llm", "--model", MODEL,
                   "--base-url", server.base_url, "--llm-cache", str(tmp_path / "llm-cache"), "--llm-attempts", "1",
                   "--llm-budget", "60"])
    err = capfd.readouterr().err
    assert rc == 1 and "runs something when its library is loaded (.init_array: 2 entries, not 1" in err, err
    assert not pwned.exists() and not (tmp_path / "out.cu").exists()

DEPTH = ["ctor_constant_object", "dtor_device_object", "asm_top_level_init_array", "static_local_object",
         "popen_in_kernel", "asm_syscall_in_kernel", "fork_exec_via_syscall", "signal_the_parent",
         "parent_environ_to_file", "operator_new", "getenv_key_to_file", "trap_in_constructor",
         "endless_constructor", "builtin_trap_in_kernel"]


@pytest.mark.needs("g++")
@pytest.mark.slow
@pytest.mark.parametrize("name", DEPTH)
def test_defence_in_depth_without_the_allow_list(name, tmp_path, monkeypatch, capfd):
    if name in X86_ONLY and platform.machine() != "x86_64":
        pytest.skip("x86-64 assembly and syscall numbers")
    _, effect = FIXTURES[name]
    monkeypatch.setattr(backend, "check_code", lambda *a, **k: [])  # everything the model writes is compiled
    monkeypatch.setattr(gate, "load_time_code", lambda *a, **k: "")  # ... and loaded, constructors and all
    monkeypatch.setenv("NUMBA2CUDA_LLM_NVCC", "0")  # nvcc refuses most of these: the CPU path is what is tested
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("NUMBA2CUDA_CACHE", str(tmp_path / "n2c"))
    monkeypatch.chdir(tmp_path)
    pwned = tmp_path / "pwned"
    budget = 20 if effect == "hang" else 45  # a hang takes the whole budget
    with ScriptedServer([{"content": answer(name, pwned)}]) as server:
        capfd.readouterr()
        t0 = time.monotonic()
        rc = main(["translate", str(KERNEL), "-o", str(tmp_path / "out.cu"), "--backend", "llm", "--model", MODEL,
                   "--base-url", server.base_url, "--llm-cache", str(tmp_path / "llm-cache"), "--llm-attempts", "1",
                   "--llm-budget", str(budget)])
        seconds = time.monotonic() - t0
    out, err = capfd.readouterr()
    # rc 0 is possible: with the allow-list off nothing judges the constructor, whose kernel is correct; what is
    # tested is that its host code could do nothing, and that numba2cuda (this process) is still here
    assert rc in (0, 1) and seconds < budget, err
    assert not pwned.exists(), f"host code wrote a file outside the confined child: {err}"
    assert "host code ran" not in out + err and "constructor ran" not in out + err  # the child's output is its own
    if effect in ("crash", "hang"):
        assert rc == 1 and not (tmp_path / "out.cu").exists(), err
    if effect == "crash":
        assert "SIGILL" in err, err
    if effect == "hang":
        assert "did not finish within" in err, err
    if name in ("popen_in_kernel", "fork_exec_via_syscall"):
        assert "SIGSYS" in err, err  # starting a program kills the child
