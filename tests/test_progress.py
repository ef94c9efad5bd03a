"""translator/progress.py: a bar on a terminal's stderr (rich, or a plain counter without it), nothing when stderr
is not a terminal or --quiet, stdout never touched."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import textwrap
from pathlib import Path

from translator import progress

ROOT = Path(__file__).resolve().parents[1]


def run_on_a_terminal(code: str, *, block_rich: bool = False, env=None) -> tuple[str, str]:
    """Run CODE with stderr on a pseudo-terminal and stdout on a pipe: (stdout, what the terminal got)."""
    prelude = "import sys; sys.modules['rich'] = None\n" if block_rich else ""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", prelude + textwrap.dedent(code)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=slave, stdin=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "100", **(env or {})})
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    out = proc.stdout.read().decode()
    proc.wait(timeout=60)
    os.close(master)
    assert proc.returncode == 0, (out, b"".join(chunks).decode(errors="replace"))
    return out, b"".join(chunks).decode(errors="replace")


WORK = """
    import time
    from translator import progress
    with progress.bar("verify demo.py", total=3) as b:
        for i in range(3):
            print(f"result {i}", flush=True)   # machine output on stdout
            time.sleep(0.15)
            b.advance(note=f"case {i}")
        time.sleep(0.2)
"""


def test_rich_bar_on_a_terminal_shows_counts_and_elapsed_time_and_leaves_stdout_alone():
    out, tty = run_on_a_terminal(WORK)
    assert out == "result 0\nresult 1\nresult 2\n"  # stdout is a pipe: exactly the program's own lines
    assert "verify demo.py" in tty and "3/3" in tty and "0:00:0" in tty  # description, count, elapsed
    assert "result" not in tty


def test_plain_counter_without_rich():
    out, tty = run_on_a_terminal(WORK, block_rich=True)
    assert out == "result 0\nresult 1\nresult 2\n"
    assert "verify demo.py [3/3] case 2" in tty and " s" in tty


def test_quiet_and_environment_switch_turn_it_off_on_a_terminal():
    quiet = WORK.replace("from translator import progress", "from translator import progress; progress.set_quiet()")
    assert run_on_a_terminal(quiet)[1] == ""
    assert run_on_a_terminal(WORK, env={"NUMBA2CUDA_PROGRESS": "0"})[1] == ""


def test_bars_nest_in_one_display():
    code = """
        from translator import progress
        with progress.bar("outer", total=2) as a:
            with progress.bar("inner build", total=3) as b:
                b.advance(3)
            a.advance(2)
        with progress.bar("again", total=1) as c:   # a new display after the first one closed
            c.advance()
        print("done")
    """
    out, tty = run_on_a_terminal(code)
    assert out == "done\n" and "inner build" in tty and "again" in tty


def test_not_a_terminal_draws_nothing(capsys):
    with progress.bar("work", total=2) as b:
        b.advance()
        b.update(completed=2, note="last")
        assert b.completed == 2 and b.total == 2
    assert capsys.readouterr().err == ""
    assert not progress.enabled()


BUILD = """
    import time, types
    from pathlib import Path
    from translator.build.compile import Progress
    plan = types.SimpleNamespace(name="matmul", arch_list="9.0", directory=Path("/tmp/cache/matmul-x"), arch_note="")
    p = Progress(plan, True)
    p.start()
    p.step(1, 3, "nvcc matmul.cu")
    time.sleep(0.2)
    p.step(2, 3, "c++ matmul_bind.cpp")
    time.sleep(0.2)
    p.stop(True)
"""


def test_a_cold_build_shows_its_steps_on_a_terminal_and_two_lines_elsewhere():
    out, tty = run_on_a_terminal(BUILD)
    assert "building matmul" in tty and "2/3" in tty and "c++ matmul_bind.cpp" in tty
    assert "numba2cuda: matmul built in" in tty and out == ""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(BUILD)], cwd=ROOT, capture_output=True, text=True)
    lines = proc.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("numba2cuda: building matmul for sm_90 (first use; cached in")
    assert lines[1].startswith("numba2cuda: matmul built in")
