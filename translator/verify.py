"""numba module -> equivalence verdict: its example() run by the Numba original and by the translation.

The reference side imports and runs the user's module (the translator never does): a subprocess
under NUMBA_ENABLE_CUDASIM=1 calls ``example(rng)`` per seed and runs the Numba kernel in the CUDA
simulator; where the simulator cannot (no warp shuffles, ...) or disagrees with the example's own
NumPy ``expected``, ``expected`` is the reference.  The translation runs on the CPU runtime twice
per case, under two output fills and two uninitialised-memory poison bytes (0xFF, 0x7F); both runs must agree
bit for bit, inputs must come back unchanged, and outputs must match the reference.
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

from .compare import ArrayReport, _fmt, compare_arrays, first_bit_difference
from .cpu_launch import load_cpu
from .cpurun import CpuBuildError, CpuLaunchError, set_poison
from .errors import UserError
from .lower import Options

# The reference side: imports the user's module, so it runs in its own process.
REFERENCE_SCRIPT = r'''
import importlib.util, inspect, json, os, sys, traceback
import numpy as np

path, outdir, cfg = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
seeds, want, specs = cfg["seeds"], cfg["kernel"], cfg["specs"]
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
def accepts(fn, name):
    try:
        ps = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in ps or any(p.kind is p.VAR_KEYWORD for p in ps.values())

def generic_value(name, values):
    given = getattr(mod, "VERIFY_GENERIC", {}).get(name)
    if given is not None:
        return int(given)
    v = min(values) - 1
    while v in values and v > 0:
        v -= 1
    return v if v > 0 else max(values) + 1

# The plan: every specialisation value example() can take, plus one the generic kernel runs; the
# module's VERIFY_SIZES (or --sizes) and, per tile width, tile-1 and tile+1; every seed.
sweep = {p: sorted(set(v)) for p, v in specs.items() if accepts(mod.example, p)}
combos = [{}]
for p, values in sweep.items():
    combos = [dict(c, **{p: v}) for c in combos for v in values + [generic_value(p, values)]]
base_sizes = cfg["sizes"] or list(getattr(mod, "VERIFY_SIZES", ("small",)))
sim_max = int(cfg["sim_max_threads"] or getattr(mod, "VERIFY_SIM_MAX_THREADS", 4096))
plan = []
for combo in combos:
    sizes = list(base_sizes)
    if not cfg["sizes"]:
        for v in combo.values():
            sizes += [v - 1, v + 1] if v > 1 else [v + 1]
    seen = []
    for s in sizes:
        if s not in seen:
            seen.append(s)
    for size in seen:
        for seed in seeds:
            plan.append((seed, size, combo))

def prod(v):
    v = v if isinstance(v, (list, tuple)) else [v]
    out = 1
    for x in v:
        out *= int(x)
    return out

if any(not isinstance(z, str) for z in base_sizes) and not hasattr(mod, "VERIFY_SIZES"):
    print(json.dumps({"error": "integer sizes need a module whose example(rng, size) takes them: declare "
                      "VERIFY_SIZES = (...) in the module to say it does"}))
    sys.exit(0)
metas = []
for case, (seed, size, combo) in enumerate(plan):
    try:
        ex = mod.example(np.random.default_rng(seed), size=size, **combo)
    except Exception as exc:
        raise SystemExit(f"example(rng, size={size!r}{''.join(f', {k}={v}' for k, v in combo.items())}) "
                         f"failed: {type(exc).__name__}: {exc}")
    for key in ("kernel", "griddim", "blockdim", "args", "expected"):
        if key not in ex:
            raise SystemExit(f"example() result lacks {key!r}")
    name = kernel_name(ex["kernel"])
    meta = {"case": case, "seed": seed, "size": size, "params": combo,
            "specialised": {p: v in sweep[p] for p, v in combo.items()}, "kernel": name, "griddim": ex["griddim"], "blockdim": ex["blockdim"],
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
        np.savez(os.path.join(outdir, f"case{case}.npz"), **arrays)
        continue
    # The Numba original in the simulator, outputs pre-filled like the translation's first run.
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in ex["args"]]
    for i in meta["outputs"]:
        if i in meta["inout"]:
            continue
        args[i].fill(np.nan if args[i].dtype.kind == "f" else meta["fills"][str(i)][0])
    threads = prod(ex["griddim"]) * prod(ex["blockdim"])
    if threads > sim_max:
        meta["simulator"] = (f"skipped: {threads} CUDA threads > {sim_max}, too slow there (one Python "
                             "thread per CUDA thread)")
        np.savez(os.path.join(outdir, f"case{case}.npz"), **arrays)
        metas.append(meta)
        continue
    try:
        ex["kernel"][ex["griddim"], ex["blockdim"], 0, meta["shared"]](*args)
        for i in meta["outputs"]:
            arrays[f"sim{i}"] = args[i]
        meta["simulator"] = "ok"
    except Exception as exc:
        meta["simulator"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    np.savez(os.path.join(outdir, f"case{case}.npz"), **arrays)
    metas.append(meta)
print(json.dumps({"cases": metas, "unswept": [p for p in specs if p not in sweep]}))
'''

FILLS = (  # (float fill, index of the integer sentinel, poison byte)
    (float("nan"), 0, 0xFF),  # floats read NaN, integers -1
    (1e30, 1, 0x7F),  # floats read 3.4e38, integers a large positive: a max() reduction cannot hide it
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
    size: object = "small"
    params: dict = field(default_factory=dict)  # specialisation parameters, e.g. {"tw": 16}
    specialised: dict = field(default_factory=dict)  # {"tw": True} when the value has its own template
    outputs: list[OutputResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # each names the first differing index
    inputs_unchanged: bool = True
    runs_identical: bool = True
    seconds: float = 0.0  # the translation's two runs and the comparison

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class VerifyResult:
    path: str
    source: str  # "fresh translation" or the --cu path
    cases: list[CaseResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    reference: list = field(default_factory=list, repr=False)  # [(meta, arrays)]: reusable via verify(reference=)

    @property
    def ok(self) -> bool:
        return bool(self.cases) and all(c.ok for c in self.cases)

    def to_json(self) -> dict:
        return {
            "path": self.path, "translation": self.source, "equivalent": self.ok,
            "cases": [{
                "kernel": c.kernel, "seed": c.seed, "size": c.size, "params": c.params,
                "specialised": c.specialised, "griddim": c.griddim, "blockdim": c.blockdim,
                "shared": c.shared, "reference": c.reference, "equivalent": c.ok, "problems": c.problems,
                "inputs_unchanged": c.inputs_unchanged, "runs_identical": c.runs_identical,
                "outputs": [{"name": o.name, "argument": o.index, **o.report.to_json()} for o in c.outputs],
            } for c in self.cases],
            "notes": self.notes,
        }


NOTICE = ("note: verify imports and runs {path} (its example() and the Numba original, in the CUDA "
          "simulator, in a subprocess); the translator itself never imports or runs your module.")


def run_reference(path: str, seeds: list[int], kernel: str | None, specs: dict | None = None,
                  sizes: list | None = None, sim_max_threads: int | None = None) -> tuple[list, list[str]]:
    """Run example() over the plan in a CUDA-simulator subprocess: ([(meta, arrays)], unswept params)."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    cfg = {"seeds": seeds, "kernel": kernel or "", "specs": specs or {}, "sizes": sizes,
           "sim_max_threads": sim_max_threads}
    with tempfile.TemporaryDirectory(prefix="n2c-verify-") as outdir:
        proc = subprocess.run([sys.executable, "-c", REFERENCE_SCRIPT, str(path), outdir, json.dumps(cfg)],
                              env=env, capture_output=True, text=True, timeout=1800)
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
            raise UserError(f"{path}: error: running the module's example() under the CUDA simulator failed "
                            f"(exit {proc.returncode}):\n{tail}")
        data = json.loads(lines[-1])
        if "error" in data:
            raise UserError(f"{path}: error: {data['error']}")
        out = []
        for meta in data["cases"]:
            with np.load(os.path.join(outdir, f"case{meta['case']}.npz")) as npz:
                out.append((meta, {k: npz[k] for k in npz.files}))
    return out, data["unswept"]


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
    elif str(meta["simulator"]).startswith("skipped:"):
        source = f"NumPy expected (simulator {meta['simulator']})"
    else:
        source = f"NumPy expected (the simulator cannot run it: {meta['simulator']})"
    case = CaseResult(name, meta["seed"], meta["griddim"], meta["blockdim"], meta["shared"], source,
                      meta.get("size", "small"), meta.get("params", {}), meta.get("specialised", {}))

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
                f"fill 1e30 / poison 0x7F): first difference at index {idx}: {_fmt(a)} vs {_fmt(b)}; it reads "
                "uninitialised memory or skips elements")
    return case


def specialisations(program, kernel: str | None = None) -> dict:
    """{param: [values]} of the translation's template specialisations (e.g. {"tw": [8, 16, 32]})."""
    out = {}
    for fn in program.kernels:
        if kernel and fn.c_name != kernel:
            continue
        for name, _, values in getattr(fn, "template_params", []):
            out.setdefault(name, set()).update(values)
    return {k: sorted(v) for k, v in out.items()}


def verify(path, kernel: str | None = None, seed: int = 0, seeds: int = 1, cu_text: str | None = None,
           cu_path: str | None = None, options: Options | None = None, sizes: list | None = None,
           sim_max_threads: int | None = None, reference: list | None = None, progress=None) -> VerifyResult:
    """Translate (or take `cu_text`), build for the CPU runtime, and check it against the Numba original.

    Cases: every seed x size (the module's VERIFY_SIZES, else "small"; `sizes` overrides) x
    specialisation value (each template value of the translation that example() takes as a keyword,
    plus one value the generic kernel runs; tile-1 and tile+1 are added to the sizes per value).
    `reference` reuses an earlier result's `.reference` (the simulator side does not depend on the
    translation). Raises UserError for problems with the input (translation errors, a .cu that does
    not build, no example(), an unknown kernel); returns a VerifyResult whose `ok` is the verdict.
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
    specs = specialisations(cpu.program, kernel)
    if reference is None:
        reference, unswept = run_reference(path, list(range(seed, seed + seeds)), kernel, specs, sizes,
                                           sim_max_threads)
        for p in unswept:
            result.notes.append(f"the translation specialises {p} in {{{', '.join(map(str, specs[p]))}}} but "
                                f"example() takes no {p}= keyword: only the values it chooses were run")
    result.reference = reference
    for n, (meta, arrays) in enumerate(reference):
        if kernel and meta["kernel"] != kernel:
            raise UserError(f"{path}: error: --kernel {kernel}: the module's example() runs "
                            f"{meta['kernel']!r}, the only kernel verify can check")
        if meta["kernel"] not in params:
            raise UserError(f"{path}: error: example() runs {meta['kernel']!r}, which is not among the "
                            f"translated kernels ({', '.join(params) or 'none'})")
        t0 = time.perf_counter()
        result.cases.append(check_case(cpu, meta, _Npz(arrays), params[meta["kernel"]]))
        result.cases[-1].seconds = time.perf_counter() - t0
        if progress:
            progress(n + 1, len(reference), result.cases[-1])
    return result


class _Npz:
    """The arrays of one case, read like the np.load() result check_case was written against."""

    def __init__(self, arrays: dict):
        self._a = arrays
        self.files = list(arrays)

    def __getitem__(self, key):
        return self._a[key]


def case_label(c: CaseResult) -> str:
    parts = [f"seed={c.seed}", f"size={c.size}"]
    for p, v in c.params.items():
        parts.append(f"{p}={v}" + ("" if c.specialised.get(p) else " (generic)"))
    return ",".join(parts)


def junit_xml(result: VerifyResult) -> str:
    """JUnit XML: one testcase per kernel x seed x size x specialisation; failures carry the problems."""
    from xml.sax.saxutils import quoteattr, escape
    suite = Path(result.path).stem
    failures = sum(not c.ok for c in result.cases)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuites name="numba2cuda verify" tests="{len(result.cases)}" failures="{failures}" errors="0">',
             f'  <testsuite name={quoteattr(suite)} tests="{len(result.cases)}" failures="{failures}" errors="0" '
             'skipped="0">',
             f'    <properties><property name="translation" value={quoteattr(result.source)}/></properties>']
    for c in result.cases:
        name = f"{c.kernel}[{case_label(c)}]"
        lines.append(f'    <testcase classname={quoteattr(suite + "." + c.kernel)} name={quoteattr(name)} time="{c.seconds:.3f}">')
        if not c.ok:
            detail = "\n".join([f"grid {c.griddim} block {c.blockdim} shared {c.shared} B",
                                f"reference: {c.reference}", *c.problems])
            lines.append(f'      <failure message={quoteattr(c.problems[0])} type="NotEquivalent">'
                         f'{escape(detail)}</failure>')
        lines.append(f'      <system-out>{escape("reference: " + c.reference)}</system-out>')
        lines.append("    </testcase>")
    lines += ["  </testsuite>", "</testsuites>", ""]
    return "\n".join(lines)


def _num(v: float) -> str:
    return f"{v:.3g}" if np.isfinite(v) else str(v)


def format_report(result: VerifyResult) -> str:
    lines = []
    for c in result.cases:
        spec = "".join(f"  {p}={v}" + (" (specialised)" if c.specialised.get(p) else " (generic kernel)")
                       for p, v in c.params.items())
        lines.append(f"{c.kernel}  seed {c.seed}  size {c.size}{spec}  grid {c.griddim} block {c.blockdim} "
                     f"shared {c.shared} B")
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
                     f"0xFF, 1e30 fill + poison 0x7F) bit-identical: {'yes' if c.runs_identical else 'NO'}")
        for p in c.problems:
            lines.append(f"  FAIL: {p}")
    sim = sum(c.reference.startswith("Numba original") for c in result.cases)
    if result.cases and sim < len(result.cases):
        lines.append(f"reference: the Numba original in the CUDA simulator for {sim} of {len(result.cases)} cases; "
                     "example()'s NumPy expected for the rest (see each case)")
    for n in result.notes:
        lines.append(f"note: {n}")
    lines.append(verdict_line(result))
    return "\n".join(lines)


def verdict_line(result: VerifyResult) -> str:
    kernels = sorted({c.kernel for c in result.cases})
    nseeds = len({c.seed for c in result.cases})
    nsizes = len({str(c.size) for c in result.cases})
    nspec = len({tuple(sorted(c.params.items())) for c in result.cases if c.params})
    what = (f"{', '.join(kernels)}; {len(result.cases)} case{'s' * (len(result.cases) != 1)}: {nseeds} "
            f"seed{'s' * (nseeds != 1)} x {nsizes} size{'s' * (nsizes != 1)}"
            + (f" x {nspec} specialisation values" if nspec else "") + f"; translation: {result.source}")
    if result.ok:
        return f"verdict: EQUIVALENT ({what})"
    bad = next(c for c in result.cases if not c.ok)
    failed = sum(not c.ok for c in result.cases)
    return (f"verdict: NOT EQUIVALENT ({what}): {failed} case{'s' * (failed != 1)} failed; first: {bad.kernel} "
            f"[{case_label(bad)}]: {bad.problems[0]}")
