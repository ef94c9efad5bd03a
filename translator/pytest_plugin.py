"""pytest --numba2cuda kernels/ -> one test per module x kernel x tier, each a `numba2cuda verify` of that kernel.

Registered as a pytest11 entry point, so installing numba2cuda makes it available; it does nothing unless
asked: `pytest --numba2cuda PATH...` collects every module under PATH that has a @cuda.jit kernel, and
`[tool.numba2cuda] verify = ["kernels/"]` in the project's pyproject.toml makes a plain `pytest` collect
those too. Each kernel gets a `cpu` item (the translation on the CPU runtime against the Numba original in
the simulator) and, where a GPU is visible, a `cuda` item (both on the GPU); `--numba2cuda-tiers` picks.

Scale comes from pytest-xdist, not from a scheduler of ours: `pytest --numba2cuda kernels/ -n auto`. On a
machine with several GPUs each xdist worker takes one (worker gwN the N-th GPU, round robin) by setting
CUDA_VISIBLE_DEVICES when the worker starts, before anything initialises CUDA in it.

Imports nothing heavy until a test runs: this module is loaded by every pytest run where numba2cuda is
installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from .batch import mentions_a_kernel

TIERS = ("cpu", "cuda")


def pytest_addoption(parser):
    group = parser.getgroup("numba2cuda", "numba2cuda: verify Numba kernels' CUDA C translations")
    group.addoption("--numba2cuda", action="store_true", default=False,
                    help="collect the Numba kernel modules under the given paths (or [tool.numba2cuda] verify in "
                         "pyproject.toml): one test per module x kernel x tier, each a numba2cuda verify")
    group.addoption("--numba2cuda-tiers", default="auto", metavar="LIST",
                    help="cpu, cuda or cpu,cuda (default auto: cpu, and cuda where a GPU is visible)")
    group.addoption("--numba2cuda-seeds", type=int, default=1, metavar="N", help="seeds per kernel (default 1)")
    # kernels the rules reject are verified in the model's translation, as `numba2cuda verify` does; these are its
    # LLM options (the environment and [tool.numba2cuda] configure the rest, see docs/llm.md)
    group.addoption("--numba2cuda-backend", choices=("rules", "llm", "auto"), default=None,
                    help="as verify --backend (default: [tool.numba2cuda] backend, else auto)")
    group.addoption("--numba2cuda-model", default=None, metavar="NAME", help="as verify --model")
    group.addoption("--numba2cuda-llm-cache", default=None, metavar="DIR", help="as verify --llm-cache")
    group.addoption("--numba2cuda-replay", action="store_true", default=False,
                    help="as verify --replay: the model's answers from the cache only (a project's CI)")


# --------------------------------------------------------------------------- configuration


def configured_paths(config) -> list[Path]:
    """[tool.numba2cuda] verify of the rootdir's pyproject.toml, relative to that file."""
    try:
        import tomllib
    except ImportError:  # Python 3.10: only --numba2cuda PATH
        return []
    pyproject = Path(config.rootpath) / "pyproject.toml"
    try:
        with open(pyproject, "rb") as f:
            table = tomllib.load(f).get("tool", {}).get("numba2cuda", {})
    except (OSError, ValueError):
        return []
    value = table.get("verify", [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise pytest.UsageError(f"{pyproject}: [tool.numba2cuda] verify must be a list of paths, got {value!r}")
    return [(pyproject.parent / v).resolve() for v in value]


def active(config) -> bool:
    return bool(config.getoption("numba2cuda") or getattr(config, "_numba2cuda_paths", None))


def gpu_ids() -> list[str]:
    """The GPUs this process may use, without initialising CUDA: CUDA_VISIBLE_DEVICES where set, else the UUIDs
    nvidia-smi lists (UUIDs, since nvidia-smi's order need not be CUDA's)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [v.strip() for v in visible.split(",") if v.strip()]
    if not shutil.which("nvidia-smi"):
        return []
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.strip() for line in out.splitlines() if line.strip().startswith(("GPU-", "MIG-"))]


def gpu_for_worker(worker: str | None, gpus: list[str]) -> str | None:
    """The GPU xdist worker gwN takes (the N-th, round robin), or None where there is no choice to make."""
    m = re.fullmatch(r"gw(\d+)", worker or "")
    if m is None or len(gpus) < 2:
        return None
    return gpus[int(m.group(1)) % len(gpus)]


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    config.addinivalue_line("markers", "numba2cuda: a numba2cuda verify of one kernel on one tier")
    paths = configured_paths(config)
    config._numba2cuda_paths = paths
    if not active(config):
        return
    # the worker id from xdist's own handle on this process (the environment variable leaks into the children of
    # a worker, e.g. a pytest run inside a test, which are no workers themselves)
    worker = config.workerinput.get("workerid") if hasattr(config, "workerinput") else None
    gpu = gpu_for_worker(worker, gpu_ids())
    if gpu is not None:  # before anything in this worker initialises CUDA
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu
    config._numba2cuda_gpu = gpu
    if paths and not config.getoption("numba2cuda") and config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args.extend(str(p) for p in paths)  # a plain `pytest`: the configured kernels too
    elif config.getoption("numba2cuda") and paths and config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args[:] = [str(p) for p in paths]  # `pytest --numba2cuda` alone: the configured kernels only
    from .settings import unknown_pyproject_keys

    for warning in unknown_pyproject_keys(Path(config.rootpath)):
        config.issue_config_time_warning(pytest.PytestConfigWarning(f"numba2cuda: {warning}"), stacklevel=2)


def pytest_report_header(config):
    if active(config):
        tiers = ", ".join(requested_tiers(config))
        return [f"numba2cuda: verifying kernel modules on: {tiers}"]
    return None


def requested_tiers(config) -> list[str]:
    text = config.getoption("numba2cuda_tiers")
    if text == "auto":
        return ["cpu", "cuda"] if gpu_visible() else ["cpu"]
    tiers = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in tiers if t not in TIERS]
    if bad or not tiers:
        raise pytest.UsageError(f"--numba2cuda-tiers: unknown {', '.join(bad) or 'empty list'} (cpu, cuda, auto)")
    return tiers


_GPU = {}


def gpu_visible() -> bool:
    """Whether torch sees a GPU (asked once; after the worker's CUDA_VISIBLE_DEVICES is set)."""
    if "visible" not in _GPU:
        try:
            import torch

            _GPU["visible"] = bool(torch.cuda.is_available())
        except ImportError:
            _GPU["visible"] = False
    return _GPU["visible"]


# --------------------------------------------------------------------------- collection


def _under(path: Path, roots) -> bool:
    return any(path == r or r in path.parents for r in roots)


def is_kernel_module(file_path: Path, config) -> bool:
    """Whether this run verifies FILE_PATH: a .py file (not pytest's own test or conftest file) that mentions
    cuda.jit or a CUDA ufunc (batch.mentions_a_kernel, as the folder commands pick), under --numba2cuda's paths
    or [tool.numba2cuda] verify."""
    if file_path.suffix != ".py" or not active(config):
        return False
    if not config.getoption("numba2cuda") and not _under(file_path.resolve(), config._numba2cuda_paths):
        return False
    if file_path.name.startswith(("test_", "conftest")) or file_path.name.endswith("_test.py"):
        return False
    return mentions_a_kernel(file_path)


def pytest_collect_file(file_path: Path, parent):
    if is_kernel_module(file_path, parent.config):
        return KernelModule.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent):
    """A kernel module named on the command line is not also imported as a test module by pytest (verify runs
    it, in a subprocess, where it belongs)."""
    if is_kernel_module(module_path, parent.config):
        return NotATestModule.from_parent(parent, path=module_path)
    return None


class NotATestModule(pytest.File):
    def collect(self):
        return []


class KernelModule(pytest.File):
    """A Numba module: an item per kernel and tier (kernels found by reading it, as translate does)."""

    def collect(self):
        from .errors import UserError
        from .frontend.module import parse_file

        try:
            info = parse_file(self.path)
            # not a factory's template (kernels/factory_kernel.py's make_box_filter.box_filter): what the
            # factory calls make is verified, as translate lists them
            # a @vectorize/@guvectorize(target="cuda") ufunc is verified by its name, as verify takes it
            kernels = [name for name, fn in info.functions.items()
                       if (not fn.is_device or fn.ufunc is not None) and fn.listed]
            error = None if kernels else f"{self.path}: error: no @cuda.jit kernel found"
        except UserError as exc:
            kernels, error = [], exc.text
        if error:
            yield KernelItem.from_parent(self, name="translate", kernel=None, tier=None, error=error)
            return
        tiers = requested_tiers(self.config)
        for kernel in kernels:
            for tier in tiers:
                yield KernelItem.from_parent(self, name=f"{kernel}[{tier}]", kernel=kernel, tier=tier, error=None)


class VerifyFailure(Exception):
    """verify's verdict or error, shown as the test's failure text (no traceback: the report is the point)."""


class KernelItem(pytest.Item):
    def __init__(self, *, kernel, tier, error, **kwargs):
        super().__init__(**kwargs)
        self.kernel, self.tier, self.error = kernel, tier, error
        self.add_marker("numba2cuda")
        if tier == "cuda" and not gpu_visible():
            self.add_marker(pytest.mark.skip(reason="no CUDA GPU visible to torch (the cuda tier runs there)"))

    def runtest(self):
        if self.error:
            raise VerifyFailure(self.error)
        from .errors import NotVerified, UserError
        from .llm.backend import verify_translation
        from .llm.config import api_key_withheld
        from .lower.program import Options
        from .verify import format_report, verify

        gpu = getattr(self.config, "_numba2cuda_gpu", None)
        if gpu is not None:
            self.user_properties.append(("cuda_visible_devices", gpu))
        config = self.config
        args = SimpleNamespace(file=str(self.path), kernel=self.kernel, cu=None, args=None,
                               backend=config.getoption("numba2cuda_backend"),
                               model=config.getoption("numba2cuda_model"),
                               llm_cache=config.getoption("numba2cuda_llm_cache"),
                               replay=config.getoption("numba2cuda_replay"))
        try:
            with api_key_withheld(), verify_translation(args) as args:  # a model's translation where rules reject
                result = verify(str(self.path), kernel=self.kernel, device=self.tier,
                                seeds=config.getoption("numba2cuda_seeds"), options=Options(kernels=[self.kernel]),
                                cu_text=Path(args.cu).read_text(encoding="utf-8") if args.cu else None,
                                cu_path=args.cu)
        except (UserError, NotVerified) as exc:
            raise VerifyFailure(exc.text) from None
        if not result.ok:
            raise VerifyFailure(format_report(result))

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, VerifyFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        what = f"numba2cuda verify {self.kernel} on {self.tier}" if self.kernel else "numba2cuda translate"
        return self.path, None, what
