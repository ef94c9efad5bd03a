"""numba module -> equivalence verdict: its example() run by the Numba original and by the translation.

The reference side imports and runs the user's module (the translator never does): a subprocess
under NUMBA_ENABLE_CUDASIM=1 calls ``example(rng)`` per seed and runs the Numba kernel in the CUDA
simulator; where the simulator cannot (no warp shuffles, ...) or disagrees with the example's own
NumPy ``expected``, ``expected`` is the reference.  The translation runs on the CPU runtime twice
per seed, under two output fills and two uninitialised-memory poison bytes; both runs must agree
bit for bit, inputs must come back unchanged, and outputs must match the reference.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

import numpy as np

from .compare import ArrayReport, _fmt, compare_arrays, first_bit_difference
from .cpu_launch import load_cpu
from .cpurun import CpuBuildError, CpuLaunchError, set_poison
from .errors import UserError
from .lower import Options

# The reference side: imports the user's module, so it runs in its own process.
REFERENCE_SCRIPT = r'''
import importlib.util, json, os, sys, traceback
import numpy as np

path, outdir, seeds, want = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
sys.path.insert(0, os.path.dirname(os.path.abspath(path)))

def sentinels(dtype, avoid):
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    if info is None:
        return [True, False]
    out = []
    for k in range(1000):
        for cand in (info.max - k, info.min + k):
            if not any(np.any(a == cand) for a in avoid) and cand not in out:
                out.append(cand)
                if len(out) == 2:
                    return out
    raise RuntimeError("no sentinel value found")

def kernel_name(k):
    for get in (lambda: k.__name__, lambda: k.fn.__name__, lambda: k.py_func.__name__):
        try:
            return get()
        except AttributeError:
            pass
    return repr(k)

spec = importlib.util.spec_from_file_location("n2c_verify_target", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
if not hasattr(mod, "example"):
    print(json.dumps({"error": "no example() in the module: verify needs example(rng, size) returning "
                      "dict(kernel=..., griddim=..., blockdim=..., shared=..., args=[...], expected={i: array})"}))
    sys.exit(0)
metas = []
for seed in seeds:
    ex = mod.example(np.random.default_rng(seed), size="small")
    for key in ("kernel", "griddim", "blockdim", "args", "expected"):
        if key not in ex:
            raise SystemExit(f"example() result lacks {key!r}")
    name = kernel_name(ex["kernel"])
    meta = {"seed": seed, "kernel": name, "griddim": ex["griddim"], "blockdim": ex["blockdim"],
            "shared": int(ex.get("shared", 0) or 0), "nargs": len(ex["args"]),
            "arrays": [], "scalars": {}, "outputs": sorted(int(i) for i in ex["expected"]),
            "inout": sorted(int(i) for i in ex.get("inout", ())),
            "rtol": ex.get("rtol"), "atol": ex.get("atol"), "fills": {}, "simulator": None}
    arrays = {}
    for i, a in enumerate(ex["args"]):
        if isinstance(a, np.ndarray):
            meta["arrays"].append(i)
            arrays[f"arg{i}"] = a
        else:
            v = a.item() if isinstance(a, np.generic) else a
            meta["scalars"][str(i)] = v
    for i, e in ex["expected"].items():
        arrays[f"expected{i}"] = np.asarray(e)
        a = ex["args"][i]
        if a.dtype.kind in "iub":
            meta["fills"][str(i)] = [v.item() if isinstance(v, np.generic) else v
                                     for v in sentinels(a.dtype, [e, a])]
    if want and name != want:
        metas.append(meta)
        np.savez(os.path.join(outdir, f"seed{seed}.npz"), **arrays)
        continue
    # The Numba original in the simulator, outputs pre-filled like the translation's first run.
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in ex["args"]]
    for i in meta["outputs"]:
        if i in meta["inout"]:
            continue
        args[i].fill(np.nan if args[i].dtype.kind == "f" else meta["fills"][str(i)][0])
    try:
        ex["kernel"][ex["griddim"], ex["blockdim"], 0, meta["shared"]](*args)
        for i in meta["outputs"]:
            arrays[f"sim{i}"] = args[i]
        meta["simulator"] = "ok"
    except Exception as exc:
        meta["simulator"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    np.savez(os.path.join(outdir, f"seed{seed}.npz"), **arrays)
    metas.append(meta)
print(json.dumps({"cases": metas}))
'''

FILLS = (  # (float fill, index of the integer sentinel, poison byte)
    (float("nan"), 0, 0xFF),
    (1e30, 1, 0x00),
)


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
    outputs: list[OutputResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # each names the first differing index
    inputs_unchanged: bool = True
    runs_identical: bool = True

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class VerifyResult:
    path: str
    source: str  # "fresh translation" or the --cu path
    cases: list[CaseResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.cases) and all(c.ok for c in self.cases)

    def to_json(self) -> dict:
        return {
            "path": self.path, "translation": self.source, "equivalent": self.ok,
            "cases": [{
                "kernel": c.kernel, "seed": c.seed, "griddim": c.griddim, "blockdim": c.blockdim,
                "shared": c.shared, "reference": c.reference, "equivalent": c.ok, "problems": c.problems,
                "inputs_unchanged": c.inputs_unchanged, "runs_identical": c.runs_identical,
                "outputs": [{"name": o.name, "argument": o.index, **o.report.to_json()} for o in c.outputs],
            } for c in self.cases],
        }


NOTICE = ("note: verify imports and runs {path} (its example() and the Numba original, in the CUDA "
          "simulator, in a subprocess); the translator itself never imports or runs your module.")


def run_reference(path: str, seeds: list[int], kernel: str | None, outdir: str) -> list[dict]:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, "-c", REFERENCE_SCRIPT, str(path), outdir, json.dumps(seeds),
                           kernel or ""], env=env, capture_output=True, text=True, timeout=1800)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        raise UserError(f"{path}: error: running the module's example() under the CUDA simulator failed "
                        f"(exit {proc.returncode}):\n{tail}")
    data = json.loads(lines[-1])
    if "error" in data:
        raise UserError(f"{path}: error: {data['error']}")
    return data["cases"]


def _tuple(v):
    return tuple(v) if isinstance(v, list) else v


def _prefill(a: np.ndarray, fill: float, sentinel) -> None:
    a.fill(fill if a.dtype.kind == "f" else sentinel)


def check_case(cpu, meta: dict, npz, param_names: list[str]) -> CaseResult:
    name = meta["kernel"]
    arrays = {int(k[3:]): npz[k] for k in npz.files if k.startswith("arg")}
    expected = {int(k[8:]): npz[k] for k in npz.files if k.startswith("expected")}
    sim = {int(k[3:]): npz[k] for k in npz.files if k.startswith("sim")}
    outputs, inout = meta["outputs"], set(meta["inout"])
    rtol, atol = meta["rtol"], meta["atol"]
    label = {i: f"{param_names[i]} (arg {i})" if i < len(param_names) else f"arg {i}"
             for i in range(meta["nargs"])}

    # The reference: the simulator's outputs when it ran and agrees with the example's NumPy reference.
    reference = dict(expected)
    if meta["simulator"] == "ok":
        disagree = [(i, r) for i in outputs
                    if not (r := compare_arrays(expected[i], sim[i], rtol, atol)).ok]
        if disagree:
            i, r = disagree[0]
            source = (f"NumPy expected (the simulator's {label[i]} disagrees with it: {r.describe_first()}; "
                      "the simulator is not bit-faithful)")
        else:
            reference = {i: sim[i] for i in outputs}
            source = "Numba original in the CUDA simulator"
    else:
        source = f"NumPy expected (the simulator cannot run it: {meta['simulator']})"
    case = CaseResult(name, meta["seed"], meta["griddim"], meta["blockdim"], meta["shared"], source)

    kernel = getattr(cpu, name)
    runs = []
    for fill, which, poison in FILLS:
        args = []
        for i in range(meta["nargs"]):
            if i in arrays:
                a = arrays[i].copy()  # its own copy; inout arrays keep the given contents
                if i in outputs and i not in inout:
                    _prefill(a, fill, meta["fills"].get(str(i), [0, 0])[which])
                args.append(a)
            else:
                args.append(meta["scalars"][str(i)])
        set_poison(kernel.lib, poison)
        try:
            kernel[_tuple(meta["griddim"]), _tuple(meta["blockdim"]), 0, meta["shared"]](*args)
        except CpuLaunchError as exc:
            case.problems.append(f"the translation's launch failed (poison 0x{poison:02X}): {exc.message or exc}")
            return case
        for i, before in arrays.items():
            if i in outputs:
                continue
            diff = first_bit_difference(before, args[i])
            if diff is not None and case.inputs_unchanged:
                case.inputs_unchanged = False
                idx, was, now = diff
                case.problems.append(f"read-only input {label[i]} was modified by the translation: first "
                                     f"difference at index {idx}: was {_fmt(was)}, now {_fmt(now)}")
        runs.append(args)

    for i in outputs:
        r = compare_arrays(reference[i], runs[0][i], rtol, atol)
        case.outputs.append(OutputResult(label[i], i, r))
        if not r.ok:
            case.problems.append(f"output {label[i]}: {r.describe_first()}")
    for i in outputs:
        diff = first_bit_difference(runs[0][i], runs[1][i])
        if diff is not None:
            case.runs_identical = False
            idx, a, b = diff
            case.problems.append(
                f"output {label[i]} differs between two runs of the translation (fill NaN / poison 0xFF vs "
                f"fill 1e30 / poison 0x00): first difference at index {idx}: {_fmt(a)} vs {_fmt(b)}; it reads "
                "uninitialised memory or skips elements")
    return case


def verify(path, kernel: str | None = None, seed: int = 0, seeds: int = 1, cu_text: str | None = None,
           cu_path: str | None = None, options: Options | None = None) -> VerifyResult:
    """Translate (or take `cu_text`), build for the CPU runtime, and check it against the Numba original.

    Raises UserError for problems with the input (translation errors, a .cu that does not build,
    no example(), an unknown kernel); returns a VerifyResult whose `ok` is the verdict otherwise.
    """
    path = str(path)
    if seeds < 1:
        raise UserError("verify: error: --seeds must be at least 1")
    try:
        cpu = load_cpu(path, cu_text=cu_text, options=options)  # translation errors surface first
    except CpuBuildError as exc:
        what = cu_path or "the translation"
        raise UserError(f"{what}: error: does not build for the CPU runtime:\n{exc.output}") from None
    params = {fn.c_name: [p.name for p in fn.params] for fn in cpu.program.kernels}
    result = VerifyResult(path, cu_path or "fresh translation")
    with tempfile.TemporaryDirectory(prefix="n2c-verify-") as tmp:
        metas = run_reference(path, list(range(seed, seed + seeds)), kernel, tmp)
        for meta in metas:
            if kernel and meta["kernel"] != kernel:
                raise UserError(f"{path}: error: --kernel {kernel}: the module's example() runs "
                                f"{meta['kernel']!r}, the only kernel verify can check")
            if meta["kernel"] not in params:
                raise UserError(f"{path}: error: example() runs {meta['kernel']!r}, which is not among the "
                                f"translated kernels ({', '.join(params) or 'none'})")
            with np.load(os.path.join(tmp, f"seed{meta['seed']}.npz")) as npz:
                result.cases.append(check_case(cpu, meta, npz, params[meta["kernel"]]))
    return result


def _num(v: float) -> str:
    return f"{v:.3g}" if np.isfinite(v) else str(v)


def format_report(result: VerifyResult) -> str:
    lines = []
    for c in result.cases:
        lines.append(f"{c.kernel}  seed {c.seed}  grid {c.griddim} block {c.blockdim} shared {c.shared} B")
        lines.append(f"  reference: {c.reference}")
        rows = [("output", "dtype", "shape", "bit-identical", "max ULP", "max abs", "max rel", "rtol/atol", "result")]
        for o in c.outputs:
            r = o.report
            rows.append((o.name, r.dtype, str(r.shape), "yes" if r.bit_identical else "no",
                         "-" if r.max_ulp is None else str(r.max_ulp), _num(r.max_abs), _num(r.max_rel),
                         f"{r.rtol:g}/{r.atol:g}", "ok" if r.ok else f"FAIL ({r.mismatches} differ)"))
        widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
        for row in rows:
            lines.append("  " + "  ".join(s.ljust(w) for s, w in zip(row, widths)).rstrip())
        lines.append(f"  inputs unchanged: {'yes' if c.inputs_unchanged else 'NO'}; two runs (NaN fill + poison "
                     f"0xFF, 1e30 fill + poison 0x00) bit-identical: {'yes' if c.runs_identical else 'NO'}")
        for p in c.problems:
            lines.append(f"  FAIL: {p}")
    lines.append(verdict_line(result))
    return "\n".join(lines)


def verdict_line(result: VerifyResult) -> str:
    kernels = sorted({c.kernel for c in result.cases})
    nseeds = len({c.seed for c in result.cases})
    what = f"{', '.join(kernels)}; {nseeds} seed{'s' * (nseeds != 1)}; translation: {result.source}"
    if result.ok:
        return f"verdict: EQUIVALENT ({what})"
    bad = next(c for c in result.cases if not c.ok)
    return f"verdict: NOT EQUIVALENT ({what}): {bad.kernel} seed {bad.seed}: {bad.problems[0]}"
