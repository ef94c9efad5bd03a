"""numba module -> equivalence verdict: its example() run by the Numba original and by the translation.

The reference side imports and runs the user's module (the translator never does): a subprocess
(reference.py) calls ``example(rng, size, ...)`` per case and runs the Numba original on the
GPU, or without one in Numba's CUDA simulator; where the simulator cannot (no warp shuffles, too many
threads) or disagrees with the example's own NumPy ``expected``, ``expected`` is the reference.
The translation runs twice per case (on the CPU runtime or the GPU), under two output fills and, on
the CPU, two uninitialised-memory poison bytes (0xFF, 0x7F); both runs must agree bit for bit,
inputs must come back unchanged, the shared memory asked for must fit the device, and outputs must
match the reference.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .compare import ArrayReport, format_value, compare_arrays, first_bit_difference
from ..errors import UserError
from ..analysis.limits import DEFAULT_LIMIT, shared_problem
from ..sandbox import scrubbed_env  # the user's module never sees a secret
from ..lower.names import entry_name
from ..lower.program import Options
from .runners import CpuRunner, GpuRunner, LaunchFailed, cuda_available, device_shared_limit
from .oneoff import order_oneoff_args

FILLS = (  # (float fill, index of the integer sentinel, poison byte)
    (float("nan"), 0, 0xFF),  # floats read NaN, integers -1
    (1e30, 1, 0x7F),  # floats read 3.4e38, integers a large positive: a max() reduction cannot hide it
)
DISTRIBUTIONS = ("uniform", "large", "tiny", "negative")  # redraws of the float inputs, beside example()'s own


@dataclass
class OutputResult:
    name: str
    index: int
    report: ArrayReport


@dataclass
class CaseResult:
    kernel: str
    seed: int
    griddim: object
    blockdim: object
    shared: int
    reference: str  # where the reference outputs came from
    size: object = "small"
    params: dict = field(default_factory=dict)  # specialisation parameters, e.g. {"tw": 16}
    specialised: dict = field(default_factory=dict)  # {"tw": True} when the value has its own template
    distribution: str = "example"  # example()'s inputs, or a redraw of its float inputs ("large", ...)
    outputs: list[OutputResult] = field(default_factory=list)
    cpu_outputs: list[OutputResult] = field(default_factory=list)  # --also-cpu: the CPU runtime vs the GPU original
    problems: list[str] = field(default_factory=list)  # each names the first differing index
    inputs_unchanged: bool = True
    runs_identical: bool = True
    runs: str = ""  # how the two runs differed (fills, poison)
    seconds: float = 0.0  # the translation's two runs and the comparison

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class VerifyResult:
    path: str
    source: str  # "fresh translation" or the --cu path
    device: str = "CPU runtime"
    cases: list[CaseResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    reference: list = field(default_factory=list, repr=False)  # [(meta, arrays)]: reusable via verify(reference=)

    @property
    def ok(self) -> bool:
        return bool(self.cases) and all(c.ok for c in self.cases)

    def to_json(self) -> dict:
        def outputs(lst):
            return [{"name": o.name, "argument": o.index, **o.report.to_json()} for o in lst]
        return {
            "path": self.path, "translation": self.source, "device": self.device, "equivalent": self.ok,
            "cases": [{
                "kernel": c.kernel, "seed": c.seed, "size": c.size, "params": c.params, "distribution": c.distribution,
                "specialised": c.specialised, "griddim": c.griddim, "blockdim": c.blockdim,
                "shared": c.shared, "reference": c.reference, "equivalent": c.ok, "problems": c.problems,
                "inputs_unchanged": c.inputs_unchanged, "runs_identical": c.runs_identical,
                "outputs": outputs(c.outputs), "cpu_runtime_vs_gpu": outputs(c.cpu_outputs),
            } for c in self.cases],
            "notes": self.notes,
        }


NOTICE = ("note: verify imports and runs {path} (its example() and the Numba original, {where}, in a "
          "subprocess); the translator itself never imports or runs your module.")


def run_reference(path: str, seeds: list[int], kernel: str | None, specs: dict | None = None,
                  sizes: list | None = None, sim_max_threads: int | None = None, device: str = "simulator",
                  dists=DISTRIBUTIONS, oneoff: dict | None = None) -> tuple[list, dict]:
    """Run the plan's examples through the Numba original in a subprocess: ([(meta, arrays)], info)."""
    env = scrubbed_env()
    if device == "simulator":
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    else:
        env.pop("NUMBA_ENABLE_CUDASIM", None)
    cfg = {"seeds": seeds, "kernel": kernel or "", "specs": specs or {}, "sizes": sizes, "device": device,
           "sim_max_threads": sim_max_threads, "dists": list(dists), "oneoff": oneoff}
    script = Path(__file__).with_name("reference.py")
    with tempfile.TemporaryDirectory(prefix="n2c-verify-") as outdir:
        proc = subprocess.run([sys.executable, str(script), str(path), outdir, json.dumps(cfg)],
                              env=env, capture_output=True, text=True, timeout=3600)
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
            where = "on the GPU" if device == "cuda" else "under the CUDA simulator"
            raise UserError(f"{path}: error: running the module's example() {where} failed "
                            f"(exit {proc.returncode}):\n{tail}")
        data = json.loads(lines[-1])
        if "error" in data:
            raise UserError(f"{path}: error: {data['error']}")
        out = []
        for meta in data["cases"]:
            with np.load(os.path.join(outdir, f"case{meta['case']}.npz")) as npz:
                out.append((meta, {k: npz[k] for k in npz.files}))
    return out, data


def parse_sizes(text: str) -> list:
    """`small,1,67` -> ["small", 1, 67]."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            out.append(int(part))
        except ValueError:
            out.append(part)
    if not out:
        raise UserError("verify: error: --sizes needs at least one size (e.g. small,1,67)")
    return out


def _tuple(v):
    return tuple(v) if isinstance(v, list) else v


def _prefill(a: np.ndarray, fill: float, sentinel) -> None:
    a.fill(fill if a.dtype.kind in "fc" else sentinel)


def choose_reference(meta: dict, arrays: dict, label: dict, device: str) -> tuple[dict, str]:
    """(reference outputs, where they came from): the original when it ran and can be trusted."""
    outputs = meta["outputs"]
    expected = {i: arrays[f"expected{i}"] for i in outputs if f"expected{i}" in arrays}
    original = {i: arrays[f"orig{i}"] for i in outputs if f"orig{i}" in arrays}
    status = meta["original"]
    if status == "ok" and device == "cuda":
        return original, "Numba original on the GPU"
    if status == "ok":
        disagree = [] if not meta["expected_valid"] else [
            (i, r) for i in outputs if not (r := compare_arrays(expected[i], original[i], meta["rtol"], meta["atol"])).ok]
        if not disagree:
            return original, "Numba original in the CUDA simulator"
        i, r = disagree[0]
        return expected, (f"NumPy expected (the simulator's {label[i]} disagrees with it: {r.describe_first()}; "
                          "the simulator is not bit-faithful)")
    if str(status).startswith("skipped:"):
        return expected, f"NumPy expected (simulator {status})"
    return expected, f"NumPy expected (the original cannot run there: {status})"


def launch_args(meta: dict, inputs: dict, fill, which) -> list:
    """Fresh copies of the case's arguments, outputs pre-filled (inout arrays keep their contents)."""
    args = []
    for i in range(meta["nargs"]):
        if i in inputs:
            a = inputs[i].copy()
            if i in meta["outputs"] and i not in meta["inout"]:
                _prefill(a, fill, meta["fills"].get(str(i), [0, 0])[which])
            args.append(a)
        else:
            args.append(meta["scalars"][str(i)])
    return args


def launch_config(meta: dict) -> tuple:
    """(grid, block, dynamic shared bytes) of a case, as the runners take them."""
    return _tuple(meta["griddim"]), _tuple(meta["blockdim"]), meta["shared"]


def run_twice(case: CaseResult, runner, meta: dict, inputs: dict, label: dict):
    """Both runs' arguments after the launch, or None when a launch failed (recorded as a problem)."""
    runs = []
    for fill, which, poison in FILLS:
        try:
            after = runner.run(meta["kernel"], *launch_config(meta), launch_args(meta, inputs, fill, which), poison)
        except LaunchFailed as exc:
            case.problems.append(f"the translation's launch on the {runner.device} failed: {exc}")
            return None
        for i, before in inputs.items():
            if i in meta["outputs"] or not case.inputs_unchanged:
                continue
            diff = first_bit_difference(before, after[i])
            if diff is not None:
                case.inputs_unchanged = False
                idx, was, now = diff
                case.problems.append(f"read-only input {label[i]} was modified by the translation: first "
                                     f"difference at index {idx}: was {format_value(was)}, now {format_value(now)}")
        runs.append(after)
    return runs


def check_case(runner, meta: dict, arrays: dict, param_names: list[str], device: str, kernel_ir=None,
               shared_limit: int = DEFAULT_LIMIT, cpu_runner=None) -> CaseResult:
    inputs = {int(k[3:]): v for k, v in arrays.items() if k.startswith("arg")}
    outputs = meta["outputs"]
    label = {i: f"{param_names[i]} (arg {i})" if i < len(param_names) else f"arg {i}" for i in range(meta["nargs"])}
    reference, source = choose_reference(meta, arrays, label, device)
    case = CaseResult(meta["kernel"], meta["seed"], meta["griddim"], meta["blockdim"], meta["shared"], source,
                      meta.get("size", "small"), meta.get("params", {}), meta.get("specialised", {}),
                      meta.get("distribution", "example"))
    case.runs = ("NaN fill + poison 0xFF, 1e30 fill + poison 0x7F" if runner.poisons else "NaN fill, 1e30 fill")
    if kernel_ir is not None:
        where = "the GPU gives a block without opting in" if device == "cuda" else "a CUDA block gets by default"
        problem = shared_problem(kernel_ir, meta["shared"], shared_limit, where)
        if problem:
            case.problems.append(problem)
            return case
    runs = run_twice(case, runner, meta, inputs, label)
    if runs is None:
        return case
    for i in outputs:
        r = compare_arrays(reference[i], runs[0][i], meta["rtol"], meta["atol"])
        case.outputs.append(OutputResult(label[i], i, r))
        if not r.ok:
            case.problems.append(f"output {label[i]}: {r.describe_first()}")
    for i in outputs:
        if i in meta["inout"] and runs[0][i].dtype.kind in "fc":
            # accumulated with float atomics: blocks add in whatever order the GPU runs them, so two runs
            # (of the original too) may differ in the last bits; they must still agree within tolerance
            r = compare_arrays(runs[0][i], runs[1][i], meta["rtol"], meta["atol"])
            if not r.ok:
                case.runs_identical = False
                case.problems.append(f"output {label[i]} (accumulated) differs between two runs of the "
                                     f"translation beyond the tolerance: {r.describe_first()}")
            continue
        diff = first_bit_difference(runs[0][i], runs[1][i])
        if diff is not None:
            case.runs_identical = False
            idx, a, b = diff
            case.problems.append(
                f"output {label[i]} differs between two runs of the translation ({case.runs}): first difference "
                f"at index {idx}: {format_value(a)} vs {format_value(b)}; it reads uninitialised memory or skips elements")
    if cpu_runner is not None and device == "cuda":
        check_cpu_agreement(case, cpu_runner, meta, inputs, label, reference)
    return case


def check_cpu_agreement(case: CaseResult, cpu_runner, meta, inputs, label, reference) -> None:
    """--also-cpu: the CPU runtime, run on the same case, against the GPU original's outputs."""
    try:
        after = cpu_runner.run(meta["kernel"], *launch_config(meta), launch_args(meta, inputs, *FILLS[0][:2]),
                               FILLS[0][2])
    except LaunchFailed as exc:
        case.problems.append(f"the CPU runtime's launch failed: {exc}")
        return
    for i in meta["outputs"]:
        r = compare_arrays(reference[i], after[i], meta["rtol"], meta["atol"])
        case.cpu_outputs.append(OutputResult(label[i], i, r))
        if not r.ok:
            case.problems.append(f"the CPU runtime disagrees with the GPU original on {label[i]}: {r.describe_first()}")


def specialisations(program, kernel: str | None = None) -> dict:
    """{param: [values]} of the translation's template specialisations (e.g. {"tw": [8, 16, 32]})."""
    out = {}
    for fn in program.kernels:
        if kernel and entry_name(fn) != kernel and getattr(fn, "python_name", None) != kernel:
            continue
        for name, _, values in getattr(fn, "template_params", []):
            out.setdefault(name, set()).update(values)
    return {k: sorted(v) for k, v in out.items()}


def kernel_for(program, name: str, arrays: dict):
    """The C kernel a launch of NAME runs: the one of that name, or, for a kernel with several signatures (one C
    function each), the one whose array parameters take the launch's arrays, as Numba's dispatcher picks."""
    for fn in program.kernels:
        if entry_name(fn) == name:
            return fn
    for fn in program.kernels:
        if getattr(fn, "python_name", None) != name:
            continue
        args = {int(k[3:]): v for k, v in arrays.items() if k.startswith("arg")}
        if all(p.array is None or (k in args and str(args[k].dtype) == p.type.dtype.name
                                   and args[k].ndim == p.type.ndim) for k, p in enumerate(fn.params)):
            return fn
    return None


def resolve_device(device: str) -> str:
    """"cpu" or "cuda" for cpu|cuda|auto; asking for cuda without a GPU is a usage error."""
    if device == "auto":
        return "cuda" if cuda_available() else "cpu"
    if device == "cuda" and not cuda_available():
        raise UserError("verify: error: --device cuda: no CUDA GPU is visible to torch\n"
                        "    hint: run on a machine with a GPU, or use --device cpu (the CPU runtime)")
    return device


def verify(path, kernel: str | None = None, seed: int = 0, seeds: int = 1, cu_text: str | None = None,
           cu_path: str | None = None, options: Options | None = None, sizes: list | None = None,
           sim_max_threads: int | None = None, reference: list | None = None, progress=None,
           device: str = "cpu", also_cpu: bool = False, dists=DISTRIBUTIONS, oneoff: dict | None = None) -> VerifyResult:
    """Translate (or take `cu_text`), build it for `device`, and check it against the Numba original.

    Cases: every seed x size (the module's VERIFY_SIZES, else "small"; `sizes` overrides) x
    specialisation value (each template value of the translation that example() takes as a keyword,
    plus one value the generic kernel runs; tile-1 and tile+1 are added to the sizes per value); for
    the first seed and size also `dists`, redraws of the float inputs. `oneoff` describes a single
    launch instead of example() (see cli --args). device: "cpu" (the CPU runtime; reference from the
    simulator), "cuda" (the GPU; reference: the original on the GPU), or "auto". `reference` reuses an
    earlier result's `.reference` (it does not depend on the translation). Raises UserError for problems
    with the input; returns a VerifyResult whose `ok` is the verdict.
    """
    path = str(path)
    if seeds < 1:
        raise UserError("verify: error: --seeds must be at least 1")
    device = resolve_device(device)
    options = options or Options()
    runner = (GpuRunner if device == "cuda" else CpuRunner)(path, cu_text, options, cu_path)  # errors surface first
    cpu_runner = CpuRunner(path, cu_text, options, cu_path) if also_cpu and device == "cuda" else None
    program = runner.program
    kernels = {entry_name(fn): fn for fn in program.kernels}
    labels = {name: [p.name for p in fn.params] for name, fn in kernels.items()}
    for name, uf in getattr(program, "ufuncs", {}).items():  # a ufunc is launched by name; its kernels carry steps
        kernels[name] = next(fn for fn in program.kernels if entry_name(fn) == uf.loops[0].kernel)
        labels[name] = list(program.info.functions[name].params) + (["out"] if uf.kind == "vectorize" else [])
    result = VerifyResult(path, cu_path or "fresh translation", runner.device)
    specs = specialisations(program, kernel)
    if oneoff is not None:
        oneoff = dict(oneoff, args=order_oneoff_args(oneoff, kernels, kernel))
    if reference is None:
        reference, info = run_reference(path, list(range(seed, seed + seeds)), kernel, specs, sizes, sim_max_threads,
                                        "cuda" if device == "cuda" else "simulator", dists, oneoff)
        for p in info["unswept"]:
            result.notes.append(f"the translation specialises {p} in {{{', '.join(map(str, specs[p]))}}} but "
                                f"example() takes no {p}= keyword: only the values it chooses were run")
        result.notes += [f"skipped {d}" for d in info["dropped"]]
    result.reference = reference
    limit = device_shared_limit() if device == "cuda" else DEFAULT_LIMIT
    for n, (meta, arrays) in enumerate(reference):
        if kernel and meta["kernel"] != kernel:
            raise UserError(f"{path}: error: --kernel {kernel}: the module's example() runs "
                            f"{meta['kernel']!r}, the only kernel verify can check")
        fn = kernel_for(program, meta["kernel"], arrays)
        if fn is None:
            raise UserError(f"{path}: error: example() runs {meta['kernel']!r}, which is not among the "
                            f"translated kernels ({', '.join(kernels) or 'none'})")
        meta["kernel"] = entry_name(fn)
        t0 = time.perf_counter()
        result.cases.append(check_case(runner, meta, arrays, labels[meta["kernel"]], device, fn, limit,
                                       cpu_runner))
        result.cases[-1].seconds = time.perf_counter() - t0
        if progress:
            progress(n + 1, len(reference), result.cases[-1])
    return result
