"""What every command shares: the light install (translate imports nothing heavy; a command without its extra exits
2 naming it), `python -m numba2cuda`, `-` for standard input, output files that honour the umask and symlinks,
warnings for misspelt settings, --version, folders and globs (batches), and numba2cuda doctor."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from translator import translate_file
from translator.atomic import write_atomically
from translator.cli import main
from translator.settings import unknown_environment, unknown_pyproject_keys

ROOT = Path(__file__).resolve().parents[1]
MATMUL = ROOT / "kernels" / "matmul.py"
HEAVY = ("torch", "numba", "numba_cuda", "openai", "rich", "matplotlib")


def run_cli(*args, blocked=(), cwd=ROOT, stdin=None, env=None):
    """`python -m numba2cuda ARGS` in a fresh process where the modules in BLOCKED cannot be imported (as on a
    light install without that extra)."""
    prelude = "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in blocked)
    code = prelude + "import runpy; sys.argv = ['numba2cuda'] + sys.argv[1:]; runpy.run_module('numba2cuda', run_name='__main__')"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          input=stdin, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, timeout=600)


# --------------------------------------------------------------------------- the light install


def test_translate_imports_none_of_the_extras(tmp_path):
    """translate works with torch, numba, openai, rich and matplotlib unimportable, and imports none of them."""
    code = textwrap.dedent(f"""
        import sys
        for m in {HEAVY!r}:
            sys.modules[m] = None
        from translator.cli import main
        rc = main(["translate", {str(MATMUL)!r}, "-o", {str(tmp_path / "m.cu")!r}])
        loaded = sorted({{m.split(".")[0] for m, mod in sys.modules.items() if mod is not None}} & set({HEAVY!r}))
        print(rc, loaded)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.stdout.strip() == "0 []", proc.stdout + proc.stderr
    assert "__global__" in (tmp_path / "m.cu").read_text()


@pytest.mark.parametrize("argv,blocked,extra", [
    (["verify", str(MATMUL)], ("numba", "numba_cuda"), "verify"),
    (["build", str(MATMUL)], ("torch",), "build"),
    (["bench", str(MATMUL)], ("torch",), "bench"),
    (["package", str(MATMUL), "-o", "OUT", "--wheel"], ("torch",), "build"),
    (["verify", str(MATMUL), "--device", "cuda"], ("torch",), "build"),
])
def test_a_command_without_its_extra_exits_2_naming_it(argv, blocked, extra, tmp_path):
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in argv]
    proc = run_cli(*argv, blocked=blocked)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"pip install 'numba2cuda[{extra}]'" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_python_m_numba2cuda_and_version():
    proc = subprocess.run([sys.executable, "-m", "numba2cuda", "--version"], capture_output=True, text=True,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("numba2cuda 0.") and "Python 3." in lines[0]
    import importlib.metadata as md

    assert f"torch {md.version('torch')}" in proc.stdout and f"numba {md.version('numba')}" in proc.stdout
    assert any(line.startswith("CUDA toolkit") for line in lines)
    blocked = run_cli("--version", blocked=("torch", "numba"), env={"PATH": "/nonexistent"})
    assert blocked.returncode == 0  # a light install still answers (what it lacks, it says)


# --------------------------------------------------------------------------- paths and files


def test_translate_reads_standard_input_and_writes_standard_output():
    proc = run_cli("translate", "-", stdin=MATMUL.read_text())
    assert proc.returncode == 0, proc.stderr
    assert "__global__" in proc.stdout and "matmul_k_numba" in proc.stdout and proc.stderr == ""
    bad = run_cli("translate", "-", stdin="from numba import cuda\n\n@cuda.jit\ndef k(a):\n    a[0] = [1][0]\n")
    assert bad.returncode == 2 and bad.stderr.startswith("<stdin>:"), bad.stderr
    assert bad.stdout == ""


def test_output_honours_the_umask_and_keeps_an_existing_mode(tmp_path):
    old = os.umask(0o022)
    try:
        write_atomically(tmp_path / "a.cu", "x")
        assert stat.S_IMODE((tmp_path / "a.cu").stat().st_mode) == 0o644
        os.umask(0o077)
        write_atomically(tmp_path / "b.cu", "x")
        assert stat.S_IMODE((tmp_path / "b.cu").stat().st_mode) == 0o600
        (tmp_path / "a.cu").chmod(0o640)
        write_atomically(tmp_path / "a.cu", "y")  # rewriting keeps the file's own mode
        assert stat.S_IMODE((tmp_path / "a.cu").stat().st_mode) == 0o640
    finally:
        os.umask(old)


def test_output_through_a_symlink_writes_its_target(tmp_path):
    target = tmp_path / "real" / "matmul.cu"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "matmul.cu"
    link.symlink_to(target)
    assert main(["translate", str(MATMUL), "-o", str(link)]) == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert "__global__" in target.read_text()
    assert sorted(p.name for p in target.parent.iterdir()) == ["matmul.cu"]  # no temporary file left


def test_single_module_commands_refuse_a_folder_without_a_traceback(capsys):
    assert main(["build", str(ROOT / "kernels")]) == 2
    err = capsys.readouterr().err
    assert "takes one module" in err and "Traceback" not in err


# --------------------------------------------------------------------------- settings


def test_unknown_settings_get_the_closest_name(tmp_path, monkeypatch, capsys):
    assert unknown_environment({"NUMBA2CUDA_CAHCE": "/x", "NUMBA2CUDA_CACHE": "/y", "HOME": "/"}) == [
        "environment variable NUMBA2CUDA_CAHCE is not a numba2cuda setting (did you mean NUMBA2CUDA_CACHE?)"]
    assert "a dict in the kernel module" in unknown_environment({"NUMBA2CUDA_TYPES": "x"})[0]
    (tmp_path / "pyproject.toml").write_text('[tool.numba2cuda]\nmodle = "x"\nmodel = "y"\nbackend = "rules"\n')
    assert unknown_pyproject_keys(tmp_path) == [
        f"{tmp_path / 'pyproject.toml'}: [tool.numba2cuda] modle is not a numba2cuda setting (did you mean model?)"]
    (tmp_path / "k.py").write_text(MATMUL.read_text())
    monkeypatch.setenv("NUMBA2CUDA_CAHCE", str(tmp_path))
    assert main(["translate", str(tmp_path / "k.py"), "-o", str(tmp_path / "k.cu")]) == 0
    err = capsys.readouterr().err
    assert "warning: environment variable NUMBA2CUDA_CAHCE" in err and "did you mean model?" in err


# --------------------------------------------------------------------------- batches


def test_translate_a_folder_and_a_glob_with_jobs(tmp_path):
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    for name in ("vector_add.py", "rgb_to_grey.py"):
        (src / name).write_text((ROOT / "kernels" / name).read_text())
    (src / "sub" / "transpose.py").write_text((ROOT / "kernels" / "transpose.py").read_text())
    # a @vectorize(target="cuda") module has no cuda.jit, and is part of the batch (the H200's folder run of
    # verify kernels/ left soft_threshold out)
    (src / "sub" / "soft_threshold.py").write_text((ROOT / "kernels" / "soft_threshold.py").read_text())
    (src / "notes.py").write_text("X = 1\n")  # no kernel: not part of the batch
    (src / "broken.py").write_text("from numba import cuda\n\n@cuda.jit('void(float32[:])')\ndef broken(a):\n"
                                   "    a[0] = {}\n")
    out = tmp_path / "out"
    proc = run_cli("translate", src, "-o", out, "-j", "2")
    assert proc.returncode == 2, proc.stderr  # one module failed: the batch's exit code says so
    assert sorted(p.name for p in out.iterdir()) == ["rgb_to_grey.cu", "soft_threshold.cu", "transpose.cu",
                                                     "vector_add.cu"]
    assert "5 modules: 4 ok, 1 error" in proc.stderr and "broken.py:5:" in proc.stderr
    assert (out / "vector_add.cu").read_text() == translate_file(src / "vector_add.py")
    clean = run_cli("translate", str(src / "v*.py"), src / "sub", "-o", tmp_path / "g", "--emit", "ir")
    assert clean.returncode == 0 and "3 modules: 3 ok" in clean.stderr, clean.stderr
    assert sorted(p.name for p in (tmp_path / "g").iterdir()) == ["soft_threshold.ir.txt", "transpose.ir.txt",
                                                                  "vector_add.ir.txt"]


@pytest.mark.needs("g++")
def test_verify_a_folder_gives_one_table_one_json_and_one_exit_code(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("vector_add.py", "rgb_to_grey.py"):
        (src / name).write_text((ROOT / "kernels" / name).read_text())
    proc = run_cli("verify", src, "-j", "2", "--device", "cpu", "--sizes", "small", "--dists", "none",
                   "--json", "-", "--junit", tmp_path / "all.xml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)  # stdout holds the JSON alone; the table went to stderr
    assert [m["path"] for m in doc["modules"]] == [str(src / "rgb_to_grey.py"), str(src / "vector_add.py")]
    assert doc["equivalent"] and all(m["result"]["equivalent"] for m in doc["modules"])
    assert "EQUIVALENT" in proc.stderr and "2 modules: 2 ok" in proc.stderr
    junit = (tmp_path / "all.xml").read_text()
    assert junit.count("<testsuite ") == 2


# --------------------------------------------------------------------------- doctor


def test_doctor_reports_each_piece_and_its_fix_without_secrets():
    proc = run_cli("doctor", "--json", env={"OPENAI_API_KEY": "sk-secret-do-not-print",
                                            "OPENAI_BASE_URL": "http://user:pw@localhost:8000/v1?token=t",
                                            "NUMBA2CUDA_MODEL": "m"})
    assert proc.returncode == 0, proc.stderr
    assert "sk-secret" not in proc.stdout + proc.stderr and "pw@" not in proc.stdout and "token" not in proc.stdout
    doc = json.loads(proc.stdout)
    checks = {c["name"]: c for c in doc["checks"]}
    for name in ("python", "[verify]", "[build]", "[llm]", "[bench]", "torch", "g++", "c++", "nvcc", "GPU",
                 "simulator", "cache", "LLM"):
        assert name in checks, name
    assert checks["LLM"]["data"]["base_url"] == "http://localhost:8000/v1" and checks["LLM"]["data"]["api_key"] == "set"
    assert doc["can"]["translate"] is True


def test_doctor_without_a_compiler_says_what_is_missing_and_the_fix(tmp_path, monkeypatch):
    from translator import doctor

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CXX", raising=False)
    checks = [doctor.probe_python(), *doctor.probe_extras(), doctor.probe_cpu_compiler(), doctor.probe_host_compiler(),
              doctor.Check("torch", True, "stand-in"), doctor.Check("nvcc", True, "stand-in"),
              doctor.Check("GPU", False, "none"), doctor.Check("simulator", True, "stand-in"),
              doctor.Check("LLM", None, "not configured")]
    text = doctor.format_report(checks, doctor.capabilities(checks))
    assert "MISS  g++" in text and "fix: install g++ (Debian/Ubuntu: apt-get install g++" in text
    assert "MISS  c++" in text and "no   verify --device cpu" in text and "no   build / numba2cuda.load" in text
    assert "yes  translate" in text


def test_bench_a_folder_without_a_gpu_is_one_table_and_one_exit_code(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "vector_add.py").write_text((ROOT / "kernels" / "vector_add.py").read_text())
    proc = run_cli("bench", src, env={"CUDA_VISIBLE_DEVICES": ""})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.strip().startswith(str(src))]
    assert len(rows) == 1 and " ERROR " in rows[0], proc.stdout
    assert proc.stdout.count("numba2cuda bench: error: no CUDA GPU") == 1  # the module's own message follows
    assert "1 module: 1 error" in proc.stdout
