"""translator/sandbox.py: whatever a child does (a signal, an abort, a hang, a forged answer), the parent gets a
ChildFailed that names it and goes on; the child sees no secret and its output stays its own."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from translator.sandbox import ChildError, ChildFailed, Limits, Worker, run_command, scrubbed_env

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the child imports tests/sandbox_targets.py
TARGETS = "sandbox_targets:"


def worker(**kw):
    return Worker(limits=Limits(wall_seconds=kw.pop("wall", 20), cpu_seconds=kw.pop("cpu", 20)),
                  modules=("sandbox_targets",), **kw)


def test_round_trip_of_arguments_and_arrays():
    with worker() as w:
        result, arrays = w.call(TARGETS + "echo", {"n": 3}, [np.arange(4, dtype=np.float32)])
        assert result["args"] == {"n": 3} and result["pid"] != os.getpid()
        assert arrays[0].dtype == np.float32 and arrays[0].tolist() == [0, 2, 4, 6]


@pytest.mark.parametrize("target, signal_name", [("segfault", "SIGSEGV"), ("abort", "SIGABRT")])
def test_a_signal_in_the_child_is_a_named_failure_and_the_next_call_works(target, signal_name):
    with worker() as w:
        with pytest.raises(ChildFailed, match=signal_name):
            w.call(TARGETS + target)
        assert w.call(TARGETS + "echo", {}, [np.ones(2)])[1][0].tolist() == [2, 2]


def test_a_hang_is_killed_at_the_deadline():
    with worker(wall=1.5) as w:
        t0 = time.monotonic()
        with pytest.raises(ChildFailed, match="timed out after 1.5 s"):
            w.call(TARGETS + "sleep")
        assert time.monotonic() - t0 < 5


def test_a_busy_loop_hits_the_cpu_limit():
    with worker(wall=30, cpu=1) as w:
        with pytest.raises(ChildFailed, match="SIGXCPU|SIGKILL"):
            w.call(TARGETS + "spin")


def test_an_exception_in_the_child_is_reported_as_data():
    with worker() as w:
        with pytest.raises(ChildError, match="bad argument"):
            w.call(TARGETS + "raise_error")


def test_a_forged_answer_is_refused_not_unpickled():
    with worker() as w:
        with pytest.raises(ChildFailed, match="unreadable answer"):
            w.call(TARGETS + "forge_answer")


def test_only_allowed_modules_run():
    with worker() as w:
        with pytest.raises(ChildError, match="not among the functions"):
            w.call("os:system", {})


def test_child_output_is_captured_not_printed(capfd):
    with worker() as w:
        assert w.call(TARGETS + "print_then_return")[0] == {"ok": True}
        assert "hello from the child" in w.output() and "printf from C" in w.output()
    out, err = capfd.readouterr()
    assert "hello from the child" not in out + err and "printf from C" not in out + err


def test_the_child_sees_no_secret(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://x")
    monkeypatch.setenv("NUMBA2CUDA_LLM_TOKEN", "t")
    monkeypatch.setenv("NUMBA2CUDA_CACHE", "/tmp/c")
    with worker() as w:
        env = w.call(TARGETS + "echo")[0]["env"]
    assert "OPENAI_API_KEY" not in env and "OPENAI_BASE_URL" not in env and "NUMBA2CUDA_LLM_TOKEN" not in env
    assert "NUMBA2CUDA_CACHE" in env
    assert "GITHUB_TOKEN" not in scrubbed_env({"GITHUB_TOKEN": "x", "PATH": "/bin"})


def test_commands_time_out_and_keep_no_secret(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    out = run_command(["sh", "-c", "echo key=${OPENAI_API_KEY:-none}"])
    assert out.returncode == 0 and out.stdout.strip() == "key=none"
    with pytest.raises(ChildFailed, match="timed out"):
        run_command(["sleep", "30"], limits=Limits(wall_seconds=0.5))


def test_empty_input_is_an_empty_stdin_not_dev_null(tmp_path, monkeypatch):
    """/dev/null is a regular file on some machines (CI's among them), holding what was last written to it: a
    child given input "" must read nothing, and stderr=False must not mix stderr into what is parsed."""
    stale = tmp_path / "null"
    stale.write_text("int s;\n")
    monkeypatch.setattr(os, "devnull", str(stale))  # what subprocess.DEVNULL opens
    assert run_command(["cat"], input_text="").stdout == ""
    out = run_command(["sh", "-c", "echo out; echo err >&2"], stderr=False)
    assert out.stdout == "out\n"
