"""translator/pytest_plugin.py: `pytest --numba2cuda kernels/` collects one item per module x kernel x tier, runs
numba2cuda verify in each, works under pytest-xdist, and gives each xdist worker its own GPU."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from translator.pytest_plugin import gpu_for_worker

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]


def plugin_args() -> list[str]:
    """-p translator.pytest_plugin, unless numba2cuda is installed with its entry point (then pytest loads it)."""
    registered = any(ep.value == "translator.pytest_plugin"
                     for ep in importlib.metadata.entry_points(group="pytest11"))
    return [] if registered else ["-p", "translator.pytest_plugin"]


@pytest.fixture
def project(pytester, monkeypatch):
    """A user's project: two corpus kernels in kernels/, one with a planted bug in broken/."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("NUMBA2CUDA_CACHE", str(pytester.path / ".cache"))
    kernels = pytester.mkdir("kernels")
    for name in ("vector_add.py", "rgb_to_grey.py"):
        shutil.copy(ROOT / "kernels" / name, kernels / name)
    (kernels / "helpers.py").write_text("X = 1  # no kernel here: not collected\n")
    return pytester


def test_gpu_for_worker_round_robin():
    gpus = ["GPU-a", "GPU-b", "GPU-c"]
    assert [gpu_for_worker(f"gw{n}", gpus) for n in range(5)] == ["GPU-a", "GPU-b", "GPU-c", "GPU-a", "GPU-b"]
    assert gpu_for_worker("gw3", ["GPU-a"]) is None  # one GPU: nothing to choose
    assert gpu_for_worker(None, gpus) is None and gpu_for_worker("master", gpus) is None


@pytest.mark.needs("g++")
def test_collects_module_x_kernel_x_tier_and_verifies(project):
    result = project.runpytest_subprocess(*plugin_args(), "--numba2cuda", "--numba2cuda-tiers", "cpu", "kernels",
                                          "-v", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*kernels/rgb_to_grey.py::rgb_to_grey[[]cpu[]] PASSED*",
                                 "*kernels/vector_add.py::vector_add[[]cpu[]] PASSED*"])
    result.assert_outcomes(passed=2)
    assert "helpers.py" not in result.stdout.str()


@pytest.mark.needs("g++")
def test_a_wrong_kernel_fails_with_verifys_report_under_xdist(project):
    """A planted bug (each thread writes one element further on: the last one past the end) fails its item with
    verify's report; the other item passes; two xdist workers. (A kernel that merely disagrees with its own
    example's expected values is no longer the translation's fault: verify compares with the original.)"""
    bad = project.path / "kernels" / "vector_add.py"
    source = bad.read_text()
    assert "if i < " in source
    broken = project.mkdir("broken")
    (broken / "vector_add.py").write_text(source.replace("out[i] = a[i] + b[i]", "out[i + 1] = a[i] + b[i]"))
    assert (broken / "vector_add.py").read_text() != source
    result = project.runpytest_subprocess(*plugin_args(), "--numba2cuda", "--numba2cuda-tiers=cpu", "kernels",
                                          "broken", "-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    text = result.stdout.str()
    assert "broken/vector_add.py::vector_add[cpu]" in text and "NOT EQUIVALENT" in text
    assert "Traceback" not in text  # the verdict, not a stack


def test_pyproject_setting_makes_plain_pytest_collect_and_warns_on_unknown_keys(project):
    project.makefile(".toml", pyproject='[tool.numba2cuda]\nverify = ["kernels"]\nllm_atempts = 3\n')
    result = project.runpytest_subprocess(*plugin_args(), "--collect-only", "-q", "-p", "no:cacheprovider",
                                          "--numba2cuda-tiers=cpu")
    result.stdout.fnmatch_lines(["kernels/rgb_to_grey.py::rgb_to_grey[[]cpu[]]",
                                 "kernels/vector_add.py::vector_add[[]cpu[]]"])
    assert "llm_atempts is not a numba2cuda setting (did you mean llm_attempts?)" in result.stdout.str()


def test_inactive_without_the_flag_or_the_setting(project):
    project.makepyfile(test_plain="def test_one():\n    pass\n")
    result = project.runpytest_subprocess(*plugin_args(), "-p", "no:cacheprovider", "kernels", "test_plain.py")
    result.assert_outcomes(passed=1)  # the kernel modules are not collected


def test_a_factorys_kernels_are_collected_not_its_template(project):
    """The kernels a factory call makes are what verify checks; the def inside the factory, whose closure only a
    call gives values, is not an item of its own (it was, and failed on the H200 and here)."""
    shutil.copy(ROOT / "kernels" / "factory_kernel.py", project.path / "kernels" / "factory_kernel.py")
    result = project.runpytest_subprocess(*plugin_args(), "--numba2cuda", "--numba2cuda-tiers=cpu", "--collect-only",
                                          "-q", "kernels/factory_kernel.py", "-p", "no:cacheprovider")
    out = result.stdout.str()
    assert "kernels/factory_kernel.py::box_filter_r3[cpu]" in out and "make_box_filter" not in out, out


@pytest.mark.needs("g++")
def test_a_cuda_ufunc_module_is_collected_and_verified_by_the_ufuncs_name(project):
    """kernels/soft_threshold.py makes its kernel with @vectorize(target="cuda"), no cuda.jit: the plugin left the
    module out, then (given it) found 'no @cuda.jit kernel'; the ufunc is an item, verified as verify takes it."""
    shutil.copy(ROOT / "kernels" / "soft_threshold.py", project.path / "kernels" / "soft_threshold.py")
    result = project.runpytest_subprocess(*plugin_args(), "--numba2cuda", "--numba2cuda-tiers=cpu", "kernels/",
                                          "-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=3)  # with the project's vector_add and rgb_to_grey
    assert "kernels/soft_threshold.py::soft_threshold[cpu] PASSED" in result.stdout.str(), result.stdout.str()


def test_untranslatable_module_is_one_failing_item(project):
    (project.path / "kernels" / "bad.py").write_text(
        "from numba import cuda\n\n@cuda.jit('void(float32[:])')\ndef bad(a):\n    a[0] = [1, 2][0]\n")
    result = project.runpytest_subprocess(*plugin_args(), "--numba2cuda", "--numba2cuda-tiers=cpu",
                                          "kernels/bad.py", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert "bad.py:5:" in result.stdout.str() and "Traceback" not in result.stdout.str()


def test_each_xdist_worker_takes_its_own_gpu(project):
    """With two GPUs listed (a stand-in nvidia-smi), worker gw0 gets the first and gw1 the second, through
    CUDA_VISIBLE_DEVICES set before the tests run."""
    fake = project.mkdir("bin")
    (fake / "nvidia-smi").write_text("#!/bin/sh\necho GPU-1111\necho GPU-2222\n")
    (fake / "nvidia-smi").chmod(0o755)
    project.makepyfile(test_env="""
        import os
        from pathlib import Path

        def test_record_a():
            Path(os.environ["PYTEST_XDIST_WORKER"]).write_text(os.environ.get("CUDA_VISIBLE_DEVICES", "unset"))

        def test_record_b():
            Path(os.environ["PYTEST_XDIST_WORKER"]).write_text(os.environ.get("CUDA_VISIBLE_DEVICES", "unset"))
    """)
    env_path = f"{fake}{os.pathsep}{os.environ['PATH']}"
    os.environ["PATH"], saved = env_path, os.environ["PATH"]
    os.environ.pop("CUDA_VISIBLE_DEVICES", None)
    try:
        result = project.runpytest_subprocess(*plugin_args(), "--numba2cuda", "--numba2cuda-tiers=cpu",
                                              "test_env.py", "-n", "2", "--dist", "each", "-p", "no:cacheprovider")
    finally:
        os.environ["PATH"] = saved
    result.assert_outcomes(passed=4)
    assert (project.path / "gw0").read_text() == "GPU-1111"
    assert (project.path / "gw1").read_text() == "GPU-2222"


def test_entry_point_is_declared_and_loading_the_plugin_is_light():
    """Every pytest run where numba2cuda is installed loads the plugin: it must not import torch, numba, rich."""
    text = (ROOT / "pyproject.toml").read_text()
    assert '[project.entry-points.pytest11]\nnumba2cuda = "translator.pytest_plugin"' in text
    code = ("import sys, translator.pytest_plugin; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'numba', 'rich', 'numpy', 'libcst'}))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr
