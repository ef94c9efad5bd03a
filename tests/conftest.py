"""Shared pytest setup.

Marker ``gpu``: the test needs a real CUDA GPU.  It is skipped unless ``numba.cuda`` sees
one in a process with the simulator switched off (the check runs in a subprocess, once,
so a ``NUMBA_ENABLE_CUDASIM=1`` in the environment cannot fake a GPU).

Marker ``needs("g++")`` / ``needs("nvcc")``: the test compiles with the CPU runtime's g++, or builds a torch
extension (nvcc and the host compiler c++). Where the tool is missing the test is skipped with the reason and
fix `numba2cuda doctor` gives (its probes, run once), instead of erroring.
"""
import functools
import os
import subprocess
import sys

import pytest

from translator.doctor import tool_checks

#: what each needs(...) name requires of this machine: a torch extension build needs nvcc and the host compiler
TOOLS = {"g++": ("g++",), "c++": ("c++",), "nvcc": ("nvcc", "c++")}


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a real CUDA GPU (skipped without one)")
    if getattr(config.option, "dist", None) == "load":  # -n N without --dist
        # worksteal: a worker that runs out of tests takes some of the other's, so a few long tests (cold torch
        # builds, the matmul reference in the simulator) at the end of one worker's share leave no core idle.
        # Set here, not in addopts, so that a run without pytest-xdist (or with -p no:xdist) still starts.
        config.option.dist = "worksteal"
    config.addinivalue_line("markers", "needs(*tools): needs these tools (g++, c++, nvcc); skipped where missing")


def missing_tools_reason(names) -> str | None:
    """The skip reason for a test that needs NAMES, or None when this machine has them all."""
    checks = tool_checks()
    missing = [checks[t] for name in names for t in TOOLS[name] if not checks[t].ok]
    missing = list({c.name: c for c in missing}.values())
    if not missing:
        return None
    return "; ".join(f"{c.name} missing: {c.detail}; fix (numba2cuda doctor): {c.fix}" for c in missing)


@functools.lru_cache(maxsize=None)
def gpu_available():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    code = "from numba import cuda; print(bool(cuda.is_available()))"
    try:
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return False
    return out.stdout.strip().endswith("True")


def pytest_collection_modifyitems(config, items):
    for item in items:
        names = [name for mark in item.iter_markers("needs") for name in mark.args]
        unknown = [n for n in names if n not in TOOLS]
        if unknown:
            raise pytest.UsageError(f"{item.nodeid}: needs({', '.join(map(repr, unknown))}): known tools are "
                                    f"{', '.join(TOOLS)}")
        reason = missing_tools_reason(names) if names else None
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if gpu_items and not gpu_available():
        skip = pytest.mark.skip(reason="no CUDA GPU (numba.cuda.is_available() is False)")
        for item in gpu_items:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def no_llm_configuration(monkeypatch):
    """No test reaches a real model: the LLM backend is configured only where a test does it (tests/test_llm.py,
    against its own loopback server). Subprocesses started by tests inherit this environment."""
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "NUMBA2CUDA_MODEL"):
        monkeypatch.delenv(var, raising=False)


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/*.cu from the current translations instead of comparing")
    parser.addoption("--update-llm-cache", action="store_true", default=False,
                     help="re-record tests/llm_cache (the LLM corpus' replayed answers) from tests/llm_fixtures "
                          "through the scripted server, instead of replaying it")
