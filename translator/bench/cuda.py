"""example() runs -> GPU variants and a CUDA-event timer: the thin layer of `numba2cuda bench` that touches the GPU.

Everything runs on one torch stream (a fresh one, made current): the Numba original through
cuda.external_stream on it with Numba device arrays (cuda.as_cuda_array views made once: Numba's fast launch
path) and, at the default launch, again with the torch tensors wrapped on every call as the lecture's code
does (`kernel[...](cuda.as_cuda_array(m), ...)`: the same kernel, the host cost a torch user pays); the
translation with torch CUDA tensors on the same stream; the references on torch's current stream.
Inputs are shared by every variant of one example(); each variant writes its own copy of the outputs.
The rules (what is checked, what is timed, what is reported) live in case.py.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
import subprocess
import time
from pathlib import Path

import numpy as np

from .case import Case, Variant, bench_sizes, param_combos, params_key, run_case
from .stats import Sampling
from ..errors import UserError
from ..userimport import import_path
from ..runtime.records import from_words, is_record_array, numba_view, to_torch
from ..verify.plan import accepts as accepts_keyword  # the reference side's own
from ..verify.reference import kernel_name, launcher

FORMAT = "numba2cuda-bench/1"


class CudaTimer:
    """Device time with CUDA events on the current stream; host time with perf_counter.

    Before every timed run: the accumulated outputs are reset, a buffer at least twice the L2 (and 256 MiB)
    is written so no variant finds its data in L2, and the GPU is put to sleep (torch.cuda._sleep) long
    enough that the host has enqueued the start event, the launch and the end event before the GPU reaches
    them: the events then measure the kernel, not the host's enqueue cost.
    """

    def __init__(self, sleep_us: float = 1000.0):
        import torch

        self.torch = torch
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        self.l2_bytes = int(getattr(props, "L2_cache_size", 0) or 0)
        self.flush_bytes = max(2 * self.l2_bytes, 256 << 20)
        self.flush_buf = torch.empty(self.flush_bytes // 4, dtype=torch.float32, device="cuda")
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)
        self.sleep_us = sleep_us
        self.cycles_per_us = self._calibrate()
        self.resleeps = 0  # samples retaken because the host enqueued for longer than the GPU slept

    def _calibrate(self) -> float:
        """GPU clock cycles per microsecond of torch.cuda._sleep, measured."""
        torch = self.torch
        torch.cuda._sleep(1000)
        cycles = 2_000_000
        self.start.record()
        torch.cuda._sleep(cycles)
        self.end.record()
        self.end.synchronize()
        return cycles / max(self.start.elapsed_time(self.end) * 1000.0, 1.0)

    def _sleep(self, us: float) -> None:
        self.torch.cuda._sleep(int(us * self.cycles_per_us))

    def sync(self) -> None:
        self.torch.cuda.current_stream().synchronize()

    def device_us(self, v: Variant) -> float:
        for _ in range(6):
            if v.reset:
                v.reset()
            self.flush_buf.zero_()
            self._sleep(self.sleep_us)
            t0 = time.perf_counter()
            self.start.record()
            v.launch()
            self.end.record()
            host_us = (time.perf_counter() - t0) * 1e6
            self.end.synchronize()
            if host_us < 0.9 * self.sleep_us:  # the GPU was still asleep when the end event was enqueued
                break
            self.sleep_us *= 2
            self.resleeps += 1
        return self.start.elapsed_time(self.end) * 1000.0

    def end_to_end_us(self, v: Variant) -> float:
        """What a caller waits for one call: launch, then synchronize (L2 flushed first, as for device time)."""
        if v.reset:
            v.reset()
        self.flush_buf.zero_()
        stream = self.torch.cuda.current_stream()
        stream.synchronize()
        t0 = time.perf_counter()
        v.launch()
        stream.synchronize()
        return (time.perf_counter() - t0) * 1e6

    def enqueue_us(self, v: Variant, count: int) -> float:
        """Host cost of one launch: COUNT back-to-back launches while the GPU is busy, per launch."""
        self.sync()
        self._sleep(min(200.0 * count, 100_000.0))
        t0 = time.perf_counter()
        for _ in range(count):
            v.launch()
        seconds = time.perf_counter() - t0
        self.sync()
        return seconds / count * 1e6

    def describe(self) -> dict:
        return {"flush_bytes": self.flush_bytes, "l2_bytes": self.l2_bytes, "sleep_us": self.sleep_us,
                "resleeps": self.resleeps, "events": "CUDA events on one non-default torch stream"}


# --------------------------------------------------------------------------- the user's module

def load_user_module(path: str):
    """Import the module by path (as verify's reference side does) and check it has example()."""
    path = Path(path).resolve()
    try:
        module = import_path(str(path), "n2c_bench_" + "".join(c if c.isalnum() else "_" for c in path.stem))
    except Exception as exc:
        raise UserError(f"{path}: error: importing the module failed: {type(exc).__name__}: {exc}") from None
    if not hasattr(module, "example"):
        raise UserError(f"{path}: error: no example() in the module: bench needs example(rng, size) returning "
                        "dict(kernel=..., griddim=..., blockdim=..., shared=..., args=[...], expected={i: array})")
    return module


def call_example(module, size, seed: int, params: dict) -> dict:
    try:
        ex = module.example(np.random.default_rng(seed), size=size, **params)
    except Exception as exc:
        given = "".join(f", {k}={v}" for k, v in params.items())
        raise UserError(f"example(rng, size={size!r}{given}) failed: {type(exc).__name__}: {exc}") from None
    missing = [k for k in ("kernel", "griddim", "blockdim", "args", "expected") if k not in ex]
    if missing:
        raise UserError(f"example() result lacks {', '.join(map(repr, missing))}")
    return ex


def _dims(v):
    return tuple(int(x) for x in v) if isinstance(v, (list, tuple)) else int(v)


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def _fill_value(dtype, expected):
    """NaN for floats; for integers a value the expected output never holds (skipped elements show)."""
    if dtype.kind in "fc":
        return float("nan")
    if dtype.kind == "b":
        return not bool(np.all(expected))
    info = np.iinfo(dtype)
    for cand in range(int(info.max), int(info.max) - 1000, -1):
        if not np.any(expected == cand):
            return cand
    return int(info.min)


class DeviceExample:
    """One example()'s arguments on the GPU: inputs shared by every variant, outputs copied per variant."""

    def __init__(self, ex: dict, torch, device: str = "cuda"):
        self.torch = torch
        self.outputs = sorted(int(i) for i in ex["expected"])
        self.inout = {int(i) for i in ex.get("inout", ())}
        # scalars exactly as example() gives them: Numba types an np.float32 and a Python float differently
        self.args = [to_torch(a, device) if isinstance(a, np.ndarray) else a for a in ex["args"]]
        # record arrays (xoroshiro128p states) travel as uint64 words; Numba gets them back as records
        self.records = {i: a for i, a in enumerate(ex["args"]) if is_record_array(a)}
        self.fills = {i: _fill_value(ex["args"][i].dtype, ex["expected"][i]) for i in self.outputs
                      if i not in self.inout}
        self.grid, self.block = _dims(ex["griddim"]), _dims(ex["blockdim"])
        self.shared = int(ex.get("shared", 0) or 0)

    def variant_args(self) -> list:
        args = list(self.args)
        for i in self.outputs:
            args[i] = self.args[i].clone()  # the pristine copy stays in self.args, for reset()
        return args

    def prefill(self, args) -> None:
        for i, value in self.fills.items():
            args[i].fill_(value)

    def reset(self, args) -> None:
        for i in self.inout:
            args[i].copy_(self.args[i])

    def read(self, args) -> dict:
        self.torch.cuda.current_stream().synchronize()
        return {i: from_words(args[i].cpu().numpy(), self.records[i]) if i in self.records else args[i].cpu().numpy()
                for i in self.outputs}


def _variant(name, role, params, key, dev, args, launch, **kw) -> Variant:
    return Variant(name, role, params, key, launch, lambda: dev.read(args), lambda: dev.prefill(args),
                   (lambda: dev.reset(args)) if dev.inout else None, **kw)


def as_numba_args(args: list, tensor_type, records=None) -> list:
    """The launch arguments as Numba takes them: torch tensors as cuda.as_cuda_array views (record arrays as
    records over the same words), scalars as they are."""
    from numba import cuda

    records = records or {}
    return [numba_view(a, records[i].dtype) if i in records else cuda.as_cuda_array(a)
            if isinstance(a, tensor_type) else a for i, a in enumerate(args)]


def numba_variant(name, kernel, dev, stream, params, key, default) -> Variant:
    args = dev.variant_args()
    nargs = as_numba_args(args, dev.torch.Tensor, dev.records)  # made once: Numba's cheapest launch
    grid, block, shared = dev.grid, dev.block, dev.shared
    launch = launcher(kernel, (grid, block, stream, shared))
    return _variant(name, "numba", params, key, dev, args, lambda: launch(*nargs), default=default)


def numba_torch_variant(name, kernel, dev, stream, params, key) -> Variant:
    """The Numba original as a torch user calls it: every tensor through cuda.as_cuda_array at each launch."""
    args = dev.variant_args()
    grid, block, shared, tensor = dev.grid, dev.block, dev.shared, dev.torch.Tensor

    def launch():
        launcher(kernel, (grid, block, stream, shared))(*as_numba_args(args, tensor, dev.records))

    return _variant(name, "numba-torch", params, key, dev, args, launch, default=True)


def translation_variant(name, role, kernel, dev, handle, params, key, specialised, default) -> Variant:
    args = dev.variant_args()
    grid, block, shared = dev.grid, dev.block, dev.shared
    # the whole launch line on every call, as a caller writes it (the configuration is cached by the Kernel)
    return _variant(name, role, params, key, dev, args, lambda: kernel[grid, block, handle, shared](*args),
                    specialised=specialised, default=default)


def reference_variant(name, fn, dev, key) -> Variant:
    """A reference takes the torch tensors of args (in order); it writes the outputs or returns the result."""
    args = dev.variant_args()
    last = {}

    def launch():
        last["result"] = fn(*args)

    def outputs():
        got = dev.read(args)
        result = last.get("result")
        if isinstance(result, dev.torch.Tensor) and len(dev.outputs) == 1:
            got[dev.outputs[0]] = result.cpu().numpy()
        return got

    return Variant(name, "reference", {}, key, launch, outputs, None, None)


# --------------------------------------------------------------------------- one case, one module

def make_case(user, size, kernel_filter, specs, translation, generic, references: bool, seed: int) -> Case:
    """The variants of one size: Numba and the translation at every specialisation value example() takes,
    the generic kernel and the references at the example's default values."""
    import torch
    from numba import cuda

    ex0 = call_example(user, size, seed, {})
    name = kernel_name(ex0["kernel"], user)  # the module's name for it: a factory's kernel has its binding's
    if kernel_filter and name != kernel_filter:
        raise UserError(f"--kernel {kernel_filter}: the module's example() runs {name!r}, the only kernel bench "
                        "can time")
    if name not in translation.kernels:
        raise UserError(f"example() runs {name!r}, which is not among the translated kernels "
                        f"({', '.join(translation.kernels) or 'none'})")
    tk = translation.kernels[name]
    notes = []
    swept = {p: v for p, v in specs.items() if p in tk.param_names and accepts_keyword(user.example, p)}
    for p in sorted(set(specs) - set(swept)):
        notes.append(f"the translation specialises {p} in {{{', '.join(map(str, specs[p]))}}} but example() takes "
                     f"no {p}= keyword: only the value it chooses was timed")
    defaults = {p: _plain(ex0["args"][tk.param_names.index(p)]) for p in swept}
    stream = torch.cuda.current_stream()
    nb_stream, handle = cuda.external_stream(stream.cuda_stream), stream.cuda_stream
    variants, checks = [], {}
    for combo in param_combos(swept, defaults):
        key, default = params_key(combo), combo == defaults
        ex = ex0 if default else call_example(user, size, seed, combo)
        dev = DeviceExample(ex, torch)
        checks[key] = {"expected": {int(i): np.asarray(e) for i, e in ex["expected"].items()},
                       "rtol": ex.get("rtol"), "atol": ex.get("atol")}
        suffix = f" {key}" if combo else ""
        specialised = all(combo[p] in specs[p] for p in combo) if combo else None
        variants.append(numba_variant(f"numba{suffix}", ex["kernel"], dev, nb_stream, combo, key, default))
        if default:
            variants.append(numba_torch_variant(f"numba{suffix} on torch tensors", ex["kernel"], dev, nb_stream,
                                                combo, key))
        variants.append(translation_variant(f"translation{suffix}", "translation", tk, dev, handle, combo, key,
                                            specialised, default))
        if default and generic is not None and swept:
            variants.append(translation_variant(f"generic kernel{suffix}", "generic", generic.kernels[name], dev,
                                                handle, combo, key, False, default))
        if default and references:
            for ref_name, fn in (ex.get("references") or {}).items():
                variants.append(reference_variant(ref_name, fn, dev, key))
    return Case(name, str(size), defaults, variants, checks, ex0.get("flops"), ex0.get("bytes"),
                {"griddim": ex0["griddim"], "blockdim": ex0["blockdim"], "shared": int(ex0.get("shared", 0) or 0)},
                notes)


def bench_module(path, *, kernel=None, sizes=None, types=None, seed=0, sampling: Sampling | None = None,
                 references=True, progress=None, cu_text: str | None = None) -> dict:
    """Time the module's example() at each benchmark size: the JSON-ready result (see bench_report).

    cu_text: a given translation (hand-tuned, or the LLM backend's) instead of a fresh one; its generic
    kernel is not timed separately (a generic-only build exists only for fresh translations)."""
    import torch

    from ..runtime.dropin import load
    from ..verify.check import specialisations

    path = str(path)
    translation = load(path, types=types, cu_text=cu_text)  # translation errors surface before the module runs
    specs = specialisations(translation.program, kernel)
    generic = load(path, types=types, specialize={"*": ()}) if specs and cu_text is None else None
    user = load_user_module(path)
    size_list, guessed = bench_sizes(user, sizes)
    results, notes = [], []
    stream = torch.cuda.Stream()
    if progress is not None and hasattr(progress, "begin"):
        progress.begin(len(size_list))
    try:
        with torch.cuda.stream(stream):
            timer = CudaTimer()
            for size in size_list:
                try:
                    case = make_case(user, size, kernel, specs, translation, generic, references, seed)
                except UserError:
                    if not guessed:
                        raise
                    notes.append("the module declares no BENCH_SIZES and example() does not take size=\"bench\": "
                                 "timed at size \"small\", where launch overhead dominates device time")
                    case = make_case(user, "small", kernel, specs, translation, generic, references, seed)
                results.append(run_case(case, timer, sampling or Sampling(), progress=progress))
                if progress is not None and hasattr(progress, "case_done"):
                    progress.case_done()
                del case
                torch.cuda.empty_cache()
            timer_info = timer.describe()
    finally:  # a failing case must not leave the bar drawn over the error message
        if progress is not None and hasattr(progress, "finish"):
            progress.finish()
    return {"format": FORMAT, "module": path, "env": environment(timer_info), "cases": results, "notes": notes,
            "ok": not any(r["failures"] for r in results)}


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _command_line(cmd: list[str], line: int = 0) -> str | None:
    """One line of a command's output (None when the program is missing, fails or hangs)."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip().splitlines()[line] if out.returncode == 0 and out.stdout.strip() else None


def environment(timer_info: dict | None = None) -> dict:
    """Where the numbers come from: date, GPU, driver, CUDA and library versions, host."""
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "gpu": torch.cuda.get_device_name(), "capability": f"{props.major}.{props.minor}",
        "gpu_memory_gib": round(props.total_memory / 2**30, 1),
        "driver": _command_line(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]),
        "cuda": torch.version.cuda, "nvcc": _command_line(["nvcc", "--version"], line=-1),
        "torch": torch.__version__, "numba": _version("numba"), "numba_cuda": _version("numba-cuda"),
        "numpy": np.__version__, "triton": _version("triton"), "python": platform.python_version(),
        "host_cpus": os.cpu_count(), "timer": timer_info or {},
    }

