"""This repository's own CI gate over its corpus: `pytest --numba2cuda kernels/ -n 2`.

One corpus kernel (kernels/exponent_histogram.py, math.frexp) is translated only by a model; its verified
answers are committed in tests/llm_cache. Where the command line does not say otherwise, the plugin replays
them (as `--numba2cuda-model scripted-fixture --numba2cuda-llm-cache tests/llm_cache --numba2cuda-replay`),
so the gate needs no server and never calls one. A user's project sets its own (docs/pytest-plugin.md).
"""

from pathlib import Path

REPLAY = {"numba2cuda_model": "scripted-fixture",
          "numba2cuda_llm_cache": str(Path(__file__).resolve().parent / "tests" / "llm_cache"),
          "numba2cuda_replay": True}


def pytest_configure(config):
    if not getattr(config.option, "numba2cuda", False):
        return
    for name, value in REPLAY.items():
        if not getattr(config.option, name, None):
            setattr(config.option, name, value)
