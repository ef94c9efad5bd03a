"""numba2cuda package: a translated module as a self-contained, pip-installable project (issue 6).

No GPU needed. The wheel test (slow, ~25-40 s) builds with torch + the CUDA toolkit and imports the wheel
without a GPU and without numba2cuda."""

import argparse
import ast
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import types
import zipfile
from pathlib import Path

import jinja2
import pytest

from translator.doctor import tool_checks
from translator.runtime import dropin
from translator.errors import UserError
from translator.package.cli import cli_package
from translator.package.project import _launch_lines, environment, package, parse_arch, render_files
from corpus_harness import LLM_ONLY

ROOT = Path(__file__).resolve().parent.parent
MATMUL = ROOT / "kernels" / "matmul.py"
NVCC = tool_checks()["nvcc"].data.get("nvcc")  # the one numba2cuda builds with
NAME = "matmul_cuda"
FORBIDDEN = ("numba2cuda", "translator", "numba", "libcst")
EXPECTED_FILES = ["MANIFEST.in", "README.md", "_cuda_home.py", "csrc/matmul_bindings.cpp", "csrc/matmul_kernels.cu",
                  f"{NAME}/__init__.py", f"{NAME}/_build_info.py", f"{NAME}/_launch.py", f"{NAME}/launch_checks.py",
                  "pyproject.toml", "setup.py", f"tests/test_{NAME}.py"]

# Imports the package in a subprocess where numba2cuda, translator, numba and libcst cannot be imported.
BLOCKER = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {forbidden!r}:
            raise ImportError("blocked import of " + name)
sys.meta_path.insert(0, Block())
sys.path = [p for p in sys.path if p not in ("", ".")]
import {name}
assert not [m for m in sys.modules if m.split(".")[0] in {forbidden!r}], sorted(sys.modules)
print(sorted({name}.kernels), {name}.matmul_k_numba.__doc__)
"""


def tree(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    out = tmp_path_factory.mktemp("pkg") / "matmul_pkg"
    result = package(MATMUL, out, torch_version="2.14.1+cu130")
    return out, result


def test_writes_the_project(project):
    out, result = project
    assert result.name == NAME and result.files == EXPECTED_FILES
    assert sorted(tree(out)) == EXPECTED_FILES
    pyproject = (out / "pyproject.toml").read_text()
    assert '"torch==2.14.1"' in pyproject and "setuptools.build_meta" in pyproject
    readme = (out / "README.md").read_text()
    sha = hashlib.sha256(MATMUL.read_bytes()).hexdigest()
    for needle in (sha, "matmul.py", "numba2cuda 0.1.0", "sm_80, sm_90", "compute_90", "rules",
                   "LLM prompt version", "from matmul_cuda import matmul_k_numba\nmatmul_k_numba[",
                   "matmul_k_numba(m: float32[:, ::1], n: float32[:, ::1], out: float32[:, ::1], tw: int64)"):
        assert needle in readme, needle


def test_sources_are_the_jit_paths(project):
    out, _ = project
    _, cu_text, cpp_text = dropin.sources(str(MATMUL))
    assert (out / "csrc/matmul_kernels.cu").read_text() == cu_text
    assert (out / "csrc/matmul_bindings.cpp").read_text() == cpp_text


def test_byte_identical_across_runs(project, tmp_path):
    out, _ = project
    again = tmp_path / "again"
    package(MATMUL, again, torch_version="2.14.1+cu130")
    assert tree(again) == tree(out)
    package(MATMUL, again, torch_version="2.14.1+cu130")  # rewriting in place changes nothing
    assert tree(again) == tree(out)
    assert not any(p.name.endswith(".tmp") for p in again.rglob("*"))


REPRO = """
import sys
from translator.package.project import package
package(sys.argv[1], sys.argv[2], torch_version="2.14.1")
"""


def test_byte_identical_across_processes_and_hash_seeds(tmp_path):
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        subprocess.run([sys.executable, "-c", REPRO, str(MATMUL), str(tmp_path / seed)], env=env, check=True,
                       cwd=ROOT)
    assert tree(tmp_path / "1") == tree(tmp_path / "2")


# LLM_ONLY: the LLM backend's corpus (tests/test_llm.py), not translated by the rules
CORPUS = sorted(p for p in (ROOT / "kernels").glob("*.py") if p.stem not in LLM_ONLY)


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_every_corpus_module_packages(path):
    name, files = render_files(path, torch_version="2.14.1")
    assert name == f"{path.stem}_cuda"
    for rel, text in files.items():
        if rel.endswith(".py"):
            compile(text, rel, "exec")  # valid Python
    readme = files["README.md"]
    _, cu_text, cpp_text = dropin.sources(str(path))
    assert files[f"csrc/{path.stem}_kernels.cu"] == cu_text and files[f"csrc/{path.stem}_bindings.cpp"] == cpp_text
    assert "[grid, block, stream, shared_bytes]" in readme


def test_templates_are_strict_and_all_used(project):
    assert environment().undefined is jinja2.StrictUndefined
    folder = ROOT / "templates" / "package"
    for tpl in sorted(folder.glob("*.j2")):  # every template parses
        environment().get_template(f"package/{tpl.name}")
    with pytest.raises(jinja2.UndefinedError):
        environment().get_template("package/README.md.j2").render(name="x")
    out, _ = project
    for rel in EXPECTED_FILES:
        text = (out / rel).read_text()
        assert "{{" not in text.replace("'{{'", "") and "{%" not in text, rel


def test_runtime_imports_nothing_of_numba2cuda(project):
    out, _ = project
    for py in sorted((out / NAME).glob("*.py")):
        for node in ast.walk(ast.parse(py.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] if node.level == 0 else []
            else:
                continue
            assert all(n.split(".")[0] in ("torch", "numpy") or n.split(".")[0] in sys.stdlib_module_names
                       for n in names), (py.name, names)


def _stub_copy(out: Path, dest: Path) -> Path:
    """The generated package with a pure-Python _C stand-in (no compiler needed)."""
    shutil.copytree(out / NAME, dest / NAME)
    (dest / NAME / "_C.py").write_text("def matmul_k_numba(*args):\n    raise AssertionError('launched')\n")
    return dest


def test_runtime_imports_with_numba2cuda_blocked(project, tmp_path):
    out, _ = project
    site = _stub_copy(out, tmp_path / "site")
    env = dict(os.environ, PYTHONPATH=str(site), CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run([sys.executable, "-c", BLOCKER.format(name=NAME, forbidden=FORBIDDEN)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "['matmul_k_numba'] matmul_k_numba(m: float32[:, ::1]" in proc.stdout


def _generated_runtime(out: Path, torch_module):
    """The generated __init__.py run against a given torch and a stub _C, as a module object."""
    mod = types.ModuleType(NAME)
    info = types.ModuleType("info")
    exec((out / NAME / "_build_info.py").read_text(), info.__dict__)
    src = (out / NAME / "__init__.py").read_text()
    src = src.replace("from . import _build_info\n", "").replace("from ._build_info import __version__\n", "")
    src = src.replace("import torch\n", "", 1).replace("from . import _C", "_C = _STUB_C")
    checks = types.ModuleType("launch_checks")
    exec((out / NAME / "launch_checks.py").read_text(), checks.__dict__)
    launch = types.ModuleType("launch")
    launch.__dict__.update(torch=torch_module, _CHECKS=checks)
    launch_src = (out / NAME / "_launch.py").read_text().replace("import torch\n", "", 1)
    exec(launch_src.replace("from . import launch_checks as checks\n", "checks = _CHECKS\n"), launch.__dict__)
    src = src.replace("from ._launch import Kernel, KernelFaultError, LaunchError, synchronize",
                      "Kernel, KernelFaultError, LaunchError, synchronize = (_LAUNCH.Kernel, _LAUNCH.KernelFaultError, "
                      "_LAUNCH.LaunchError, _LAUNCH.synchronize)")
    mod.__dict__.update(torch=torch_module, _build_info=info, __version__=info.__version__, _LAUNCH=launch,
                        _STUB_C=types.SimpleNamespace(matmul_k_numba=lambda *a: ("launched", a)))
    exec(compile(src, str(out / NAME / "__init__.py"), "exec"), mod.__dict__)
    return mod


def fake_torch(cc, available=True):
    cuda = types.SimpleNamespace(is_available=lambda: available, get_device_capability=lambda d=None: cc,
                                 get_device_name=lambda d=None: "Fake GPU")
    return types.SimpleNamespace(cuda=cuda, Tensor=type("Tensor", (), {}))


@pytest.mark.parametrize("cc,ok", [((8, 0), True), ((8, 6), True), ((9, 0), True), ((10, 0), True),
                                   ((12, 0), True), ((7, 5), False)])
def test_gpu_architecture_check(project, cc, ok):
    out, _ = project
    if ok:
        _generated_runtime(out, fake_torch(cc))
        return
    with pytest.raises(ImportError) as exc:
        _generated_runtime(out, fake_torch(cc))
    msg = str(exc.value)
    assert type(exc.value).__name__ == "UnsupportedGPUError"
    assert "sm_75" in msg and "sm_80, sm_90" in msg and "compute_90" in msg and "Fake GPU" in msg


def test_no_gpu_import_skips_the_check(project):
    out, _ = project
    _generated_runtime(out, fake_torch((7, 5), available=False))


def test_arch_specific_targets(tmp_path):
    out = tmp_path / "p"
    package(MATMUL, out, arch="9.0a", torch_version="2.14.1")
    info = {}
    exec((out / NAME / "_build_info.py").read_text(), info)
    assert info["SASS"] == ((9, 0, "a"),) and info["PTX"] == (9, 0)
    with pytest.raises(ImportError):
        _generated_runtime(out, fake_torch((8, 0)))
    _generated_runtime(out, fake_torch((10, 0)))  # through the PTX


def test_launch_logic_matches_dropin(project):
    """The generated runtime's _launch.py is translator/runtime/launch.py itself, and behaves like numba2cuda.load's."""
    out, _ = project
    torch = pytest.importorskip("torch")
    mod = _generated_runtime(out, torch)
    program, _, _ = dropin.sources(str(MATMUL))
    ext = types.SimpleNamespace(matmul_k_numba=lambda *a: ("launched", a))
    from translator.runtime.launch import Kernel

    assert (out / NAME / "_launch.py").read_bytes() == (ROOT / "translator" / "runtime" / "launch.py").read_bytes()
    assert (out / NAME / "launch_checks.py").read_bytes() == \
        (ROOT / "translator" / "runtime" / "launch_checks.py").read_bytes()
    original = Kernel(ext.matmul_k_numba, *dropin.kernel_metadata(program.kernels[0]))
    copy = mod.matmul_k_numba
    assert (copy.nparams, copy.array_positions, copy.written) == \
        (original.nparams, original.array_positions, original.written)
    stream = types.SimpleNamespace(cuda_stream=1234)
    numba_stream = types.SimpleNamespace(handle=types.SimpleNamespace(value=99))
    for config in [(1, 1), ((2, 3), (16, 16)), (4, (8, 8), 0, 2048), (1, 1, None), (1, 1, stream),
                   (1, 1, numba_stream, 8), (1,), 5, (0, 1), ((1, 2, 3, 4), 1), (1, 1, 0, -1), ("x", 1),
                   (1, 1.5), (1, 1, 0, 1, 9)]:
        results = []
        for k in (original, copy):
            try:
                results.append(("ok", k[config].config))
            except Exception as exc:  # noqa: BLE001
                results.append((type(exc).__name__, str(exc)))
        assert results[0] == results[1], config
    for args in [(1, 2, 3, 4), (1, 2, 3), ()]:
        messages = []
        for k in (original, copy):
            with pytest.raises(TypeError) as exc:
                k[1, 1](*args)
            messages.append(str(exc.value))
        assert messages[0] == messages[1]
    calls = []
    copy.ext_fn = lambda *a: calls.append(a)
    t = torch.zeros(2, 2)
    assert copy[(2, 3), 4, 0, 16](t, t, t, 4) is None  # the fast path hands tensors straight to the extension
    assert calls == [(2, 3, 1, 4, 1, 1, 0, 16, t, t, t, 4)]


@pytest.mark.needs("nvcc")
def test_kernel_file_compiles_for_sm_90(project, tmp_path):
    out, _ = project
    proc = subprocess.run([NVCC, "-c", str(out / "csrc/matmul_kernels.cu"), "-o", str(tmp_path / "k.o"),
                           "-O3", "-std=c++17", "-gencode", "arch=compute_90,code=sm_90"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_setup_py_gencode(project):
    """SASS for each arch and PTX for the newest, exactly; torch's own arch choice is then off."""
    out, _ = project
    setup = (out / "setup.py").read_text()
    start = setup.index("INFO = {}")
    end = setup.index("\n", setup.index("NVCC_FLAGS = "))
    ns = {"os": os, "HERE": str(out)}
    exec(setup[start:end], ns)
    assert ns["NVCC_FLAGS"] == ["-O3", "-std=c++17", "-gencode=arch=compute_80,code=sm_80",
                                "-gencode=arch=compute_90,code=sm_90", "-gencode=arch=compute_90,code=compute_90"]


SETUP_HEAD = """
import os, runpy, sys
setup = open(sys.argv[1]).read()
head = setup[:setup.index("import torch")]
ns = {"__file__": sys.argv[1], "__name__": "setup"}
exec(compile(head, sys.argv[1], "exec"), ns)
print("CUDA_HOME=" + os.environ["CUDA_HOME"] if ns["CUDA_PROBLEM"] is None else "PROBLEM=" + ns["CUDA_PROBLEM"])
"""


def test_setup_py_finds_the_toolkit_as_numba2cuda_does(project, tmp_path):
    """The generated setup.py runs numba2cuda's own search (build/cudahome.py, verbatim) before torch's builder:
    a wrapper script on PATH leads to the real toolkit; nothing anywhere is one message naming each place."""
    out, _ = project
    assert (out / "_cuda_home.py").read_bytes() == (ROOT / "translator" / "build" / "cudahome.py").read_bytes()
    assert "_cuda_home.py" in (out / "MANIFEST.in").read_text()
    real = tmp_path / "cuda-x" / "bin"
    real.mkdir(parents=True)
    (real / "nvcc").write_text("#!/bin/sh\necho real\n")
    (real / "nvcc").chmod(0o755)
    wrappers = tmp_path / "wrappers"
    wrappers.mkdir()
    (wrappers / "nvcc").write_text(f'#!/bin/sh\nexec {real / "nvcc"} "$@"\n')
    (wrappers / "nvcc").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH")}
    proc = subprocess.run([sys.executable, "-c", SETUP_HEAD, str(out / "setup.py")], capture_output=True, text=True,
                          env={**env, "PATH": str(wrappers)})
    assert proc.returncode == 0 and proc.stdout.strip() == f"CUDA_HOME={tmp_path / 'cuda-x'}", proc.stderr
    proc = subprocess.run([sys.executable, "-c", SETUP_HEAD, str(out / "setup.py")], capture_output=True, text=True,
                          env={**env, "PATH": str(wrappers), "CUDA_HOME": str(tmp_path / "elsewhere")})
    assert proc.stdout.strip() == f"CUDA_HOME={tmp_path / 'cuda-x'}"  # a CUDA_HOME without nvcc is passed over

    nowhere = tmp_path / "proj"  # the same project where even the default folder has no toolkit
    shutil.copytree(out, nowhere)
    search = (nowhere / "_cuda_home.py").read_text()
    (nowhere / "_cuda_home.py").write_text(search.replace('DEFAULT_HOME = "/usr/local/cuda"',
                                                          f'DEFAULT_HOME = "{tmp_path / "none"}"'))
    proc = subprocess.run([sys.executable, "-c", SETUP_HEAD, str(nowhere / "setup.py")], capture_output=True,
                          text=True, env={**env, "PATH": str(tmp_path)})
    assert proc.returncode == 0 and proc.stdout.splitlines()[0] == (
        f"PROBLEM=cannot find the CUDA toolkit (nvcc): $CUDA_HOME is not set, no nvcc on PATH, "
        f"no {tmp_path / 'none'}/bin/nvcc"), proc.stdout + proc.stderr
    # a build stops with that one message; an sdist (no compiler involved) is still made
    build = subprocess.run([sys.executable, "setup.py", "-q", "build_ext"], cwd=nowhere, capture_output=True,
                           text=True, env={**env, "PATH": f"{tmp_path}{os.pathsep}{Path(sys.executable).parent}"})
    assert build.returncode == 1 and build.stderr.strip().splitlines()[-2:] == [
        f"error: building {NAME}: cannot find the CUDA toolkit (nvcc): $CUDA_HOME is not set, no nvcc on PATH, "
        f"no {tmp_path / 'none'}/bin/nvcc",
        "    hint: install the CUDA toolkit (its nvcc must match torch's CUDA major version) and put its bin/ on "
        "PATH, or set CUDA_HOME to it"], build.stderr
    sdist = subprocess.run([sys.executable, "setup.py", "-q", "sdist", "-d", str(tmp_path / "sd")], cwd=nowhere,
                           capture_output=True, text=True, env={**env, "PATH": str(tmp_path)})
    assert sdist.returncode == 0 and list((tmp_path / "sd").glob("*.tar.gz")), sdist.stderr


def test_sdist_contains_the_sources(project, tmp_path):
    pytest.importorskip("torch")
    out, _ = project
    work = tmp_path / "src"
    shutil.copytree(out, work)
    code = "from setuptools import build_meta as b; print(b.build_sdist('dist'))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=work, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    sdist = work / "dist" / proc.stdout.strip().splitlines()[-1]
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert set(EXPECTED_FILES) <= names, sorted(set(EXPECTED_FILES) - names)


def test_parse_arch():
    assert parse_arch("8.0;9.0") == ([(8, 0, ""), (9, 0, "")], (9, 0))
    assert parse_arch("9.0, 8.6 8.0 9.0") == ([(8, 0, ""), (8, 6, ""), (9, 0, "")], (9, 0))
    assert parse_arch("8.6+PTX;10.0") == ([(8, 6, ""), (10, 0, "")], (10, 0))
    for bad in ("", "Hopper", "90", "9.0b"):
        with pytest.raises(UserError):
            parse_arch(bad)


def test_launch_lines_from_the_source():
    src = 'x = "k[blocks, (tw, tw), 0, tw*tw*2*4](m, n, out, tw)"\nk[1](a)\nk[g, b](f(x), y)\nkk[1, 1](z)\n'
    assert _launch_lines(src, ["k"]) == ["k[blocks, (tw, tw), 0, tw*tw*2*4](m, n, out, tw)", "k[g, b](f(x), y)"]


def test_generic_launch_line_and_name(tmp_path):
    name, files = render_files(ROOT / "kernels" / "vector_add.py", name="vadd", torch_version="2.14.1")
    assert name == "vadd" and "vadd/__init__.py" in files and "tests/test_vadd.py" in files
    for bad in ("1x", "class", "a-b", "torch"):
        with pytest.raises(UserError):
            render_files(MATMUL, name=bad)


def _args(tmp_path, **kw):
    base = dict(file=str(MATMUL), output=str(tmp_path / "out"), name=None, arch="8.0;9.0", wheel=False,
                kernel=None, types=None, specialize=None, no_assume_nonnegative=False)
    base.update(kw)
    return argparse.Namespace(**base)


def test_cli_package_exit_codes(tmp_path, capsys):
    assert cli_package(_args(tmp_path)) == 0
    assert (tmp_path / "out" / NAME / "__init__.py").exists()
    assert cli_package(_args(tmp_path, arch="Hopper")) == 2
    assert "bad architecture" in capsys.readouterr().err
    assert cli_package(_args(tmp_path, name="my-pkg")) == 2
    bad = tmp_path / "bad.py"
    bad.write_text("from numba import cuda\n\n@cuda.jit('void(float32[:])')\ndef k(a):\n"
                   "    a[0] = [i for i in range(3)][0]\n")
    assert cli_package(_args(tmp_path, file=str(bad), output=str(tmp_path / "bad"))) == 2
    assert "error" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()
    (tmp_path / "afile").write_text("")
    assert cli_package(_args(tmp_path, output=str(tmp_path / "afile"))) == 2
    assert cli_package(_args(tmp_path, specialize=["none"], kernel=["matmul_k_numba"],
                             no_assume_nonnegative=True, output=str(tmp_path / "o2"))) == 0
    assert "matmul_k_numba<" not in (tmp_path / "o2" / "csrc" / "matmul_kernels.cu").read_text()


def test_wheel_build_failure_exits_1_with_the_compiler_errors(tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    import translator.package.project as pkg

    log = ("running build_ext\n[1/2] nvcc ...\nFAILED: build/x.o\n"
           "csrc/matmul_kernels.cu(12): error: identifier \"oops\" is undefined\n      oops;\n      ^\n"
           + "noise\n" * 200 + "error: command '/usr/bin/ninja' failed with exit code 1\n")
    import translator.build

    monkeypatch.setattr(translator.build, "cuda_home", lambda: "/usr/local/cuda")  # CI may have no toolkit
    monkeypatch.setattr(pkg.subprocess, "run",
                        lambda *a, **k: subprocess.CompletedProcess(a[0], 1, stdout=log, stderr=None))
    assert cli_package(_args(tmp_path, wheel=True)) == 1
    err = capsys.readouterr().err
    assert "building the wheel of matmul_cuda failed" in err and 'identifier "oops" is undefined' in err
    assert "noise" not in err and "pip wheel --no-build-isolation" in err


@pytest.mark.slow
@pytest.mark.needs("nvcc")
def test_wheel_builds_and_imports_without_gpu_or_numba2cuda(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "proj"
    result = package(MATMUL, out, wheel=True)
    assert result.wheel is not None and result.wheel.exists()
    with zipfile.ZipFile(result.wheel) as whl:
        names = whl.namelist()
    assert any(n.startswith(f"{NAME}/_C.") and n.endswith(".so") for n in names), names
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target",
                    str(site), str(result.wheel)], check=True, capture_output=True)
    env = dict(os.environ, PYTHONPATH=str(site), CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run([sys.executable, "-c", BLOCKER.format(name=NAME, forbidden=FORBIDDEN)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # the generated project's own tests pass against the installed wheel (GPU tests skip)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:numba2cuda",
                           str(out / "tests")],  # the package needs nothing of numba2cuda, its plugin included
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed, 1 skipped" in proc.stdout, proc.stdout
