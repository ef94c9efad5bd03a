"""Shared pytest setup.

Marker ``gpu``: the test needs a real CUDA GPU.  It is skipped unless ``numba.cuda`` sees
one in a process with the simulator switched off (the check runs in a subprocess, once,
so a ``NUMBA_ENABLE_CUDASIM=1`` in the environment cannot fake a GPU).
"""
import functools
import os
import subprocess
import sys

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a real CUDA GPU (skipped without one)")


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
