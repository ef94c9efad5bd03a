"""numba module -> side-by-side GPU timings: Numba original vs translation, checked once, then timed in one run.

A case is one size of the module's example(): its variants (the Numba original, the translation at every
specialisation value, the generic kernel, the references example() names) all run on one CUDA stream.
Every variant's outputs are checked once before anything is timed (a wrong kernel is never timed), then
device time is sampled round-robin until the medians are stable, and host cost is measured apart from it.
This file holds the rules (planning, the correctness gate, what is timed and how results are put
together); cuda.py is the thin layer that touches the GPU, so all of this runs on the CPU in the tests
with a fake timer; cli.py is the command.
"""

from __future__ import annotations

import itertools
import statistics
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .stats import Sampling, pick_fastest, ratio, sample_until_stable, summary, throughput
from ..verify.compare import compare_arrays

NOTICE = ("note: bench imports and runs {path} (its example() and the Numba original, on the GPU); the "
          "translator itself never imports or runs your module.")
# the order of the gate and of the report; "numba-torch" is the Numba original launched as the lecture launches
# it (torch tensors through cuda.as_cuda_array on every call): the same kernel, Numba's dearer host path
ROLES = ("numba", "numba-torch", "translation", "generic", "reference")


@dataclass
class Variant:
    """One thing to time. The callables are all the GPU layer provides (fakes in the tests)."""

    name: str
    role: str  # one of ROLES
    params: dict  # specialisation values it runs with, e.g. {"tw": 32}
    inputs: str  # the example whose inputs it runs on: variants with the same key must agree
    launch: Callable[[], object]  # enqueue one run on the benchmark stream
    outputs: Callable[[], dict]  # {argument index: NumPy array}, after the stream is synchronised
    prefill: Callable[[], None] | None = None  # before the checked run: outputs to NaN / a sentinel
    reset: Callable[[], None] | None = None  # before every timed run: accumulated outputs back to their start
    specialised: bool | None = None  # translation: its own template instantiation, or the generic kernel
    default: bool = False  # runs the example's default launch: the one the Numba baseline runs


@dataclass
class Case:
    kernel: str
    size: str  # the size label passed to example(), as text
    defaults: dict  # the example's default values of the specialised parameters
    variants: list[Variant]
    checks: dict  # inputs key -> {"expected": {i: array}, "rtol": .., "atol": ..}
    flops: float | None = None
    nbytes: float | None = None
    launch: dict = field(default_factory=dict)  # griddim, blockdim, shared of the default run
    notes: list[str] = field(default_factory=list)


def params_key(params: dict) -> str:
    """{"tw": 16} -> "tw=16" (also the label of a variant's inputs); {} -> "default"."""
    return ",".join(f"{k}={v}" for k, v in sorted(params.items())) or "default"


def param_combos(specs: dict, defaults: dict) -> list[dict]:
    """Every combination of specialisation values (the default combination first)."""
    names = sorted(specs)
    combos = [dict(zip(names, values)) for values in itertools.product(*(specs[n] for n in names))]
    combos.sort(key=lambda c: c != {n: defaults.get(n) for n in names})
    if defaults and all(n in defaults for n in names) and {n: defaults[n] for n in names} not in combos:
        combos.insert(0, {n: defaults[n] for n in names})
    return combos


def bench_sizes(module, override: list | None = None) -> tuple[list, bool]:
    """(sizes to time, whether they are a guess): --sizes, else the module's BENCH_SIZES, else ["bench"]
    (the corpus convention; the caller falls back to "small" when example() does not take it)."""
    if override:
        return list(override), False
    declared = getattr(module, "BENCH_SIZES", None)
    if declared:
        return list(declared), False
    return ["bench"], True


# --------------------------------------------------------------------------- the correctness gate

def compare_output(expected: np.ndarray, actual: np.ndarray, rtol, atol):
    """compare_arrays, plus the example's atol for integer outputs (compare_arrays compares them exactly;
    an example such as rgb_to_grey allows off-by-one where FMA contraction flips a truncation)."""
    report = compare_arrays(expected, actual, rtol, atol)
    if not report.ok and expected.dtype.kind in "iu" and atol and report.max_abs <= float(atol) \
            and expected.shape == actual.shape:
        report.ok = True
    return report


def _compare_all(reference: dict, got: dict, rtol, atol) -> dict:
    """One verdict over every output: ok, bit-identical, worst ULP and abs error, the first problem."""
    out = {"ok": True, "bit_identical": True, "max_ulp": 0, "max_abs": 0.0, "detail": ""}
    for i in sorted(reference):
        if i not in got:
            return dict(out, ok=False, detail=f"output {i} missing")
        r = compare_output(np.asarray(reference[i]), np.asarray(got[i]), rtol, atol)
        out["bit_identical"] &= r.bit_identical
        out["max_ulp"] = None if r.max_ulp is None or out["max_ulp"] is None else max(out["max_ulp"], r.max_ulp)
        out["max_abs"] = max(out["max_abs"], float(r.max_abs))
        if not r.ok and out["ok"]:
            out.update(ok=False, detail=f"output {i}: {r.describe_first()}")
    return out


def gate(case: Case) -> dict:
    """Run every variant once and check it: {name: {"ok", "status", ...}}.

    The translation (each specialisation and the generic kernel), and the Numba original given torch tensors,
    must match the Numba original run on the same inputs, within the example's rtol/atol, and are reported
    bit-identical or by their worst ULP.  The Numba original is checked against example()'s expected (a
    disagreement is a note: it is the reference).
    References (torch, Triton, cuBLAS) are compared with expected for information only: TF32 is not fp32.
    """
    results, numba_outputs = {}, {}
    for v in sorted(case.variants, key=lambda v: ROLES.index(v.role)):
        check = case.checks[v.inputs]
        try:
            if v.prefill:
                v.prefill()
            v.launch()
            got = v.outputs()
        except Exception as exc:  # report and go on: the other variants still get checked and timed
            results[v.name] = _launch_failure(v, exc, v.inputs in numba_outputs or v.role == "numba")
            continue
        if v.role == "numba":
            numba_outputs[v.inputs] = got
            res = _compare_all(check["expected"], got, check["rtol"], check["atol"])
            res.update(status="ok", ok=True, vs="expected",
                       note="" if res["ok"] else f"differs from example()'s expected: {res['detail']}")
        elif v.role == "reference":
            res = _compare_all(check["expected"], got, check["rtol"], check["atol"])
            res.update(status="ok", vs="expected", within_tolerance=res["ok"], ok=True)
        elif v.inputs not in numba_outputs:
            res = {"ok": False, "status": "skipped", "detail": "the Numba original failed on these inputs"}
        else:
            res = _compare_all(numba_outputs[v.inputs], got, check["rtol"], check["atol"])
            res.update(status="ok" if res["ok"] else "mismatch", vs="numba")
        results[v.name] = res
    return results


def _launch_failure(v: Variant, exc: Exception, counts: bool) -> dict:
    text = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    return {"ok": False, "status": "error" if counts else "skipped", "detail": text}


def gate_failures(case_result: dict) -> list[str]:
    """Variants whose failure makes bench exit 1: a translation that is wrong or does not run, or a
    Numba baseline that does not run (a specialisation value Numba itself cannot launch is only skipped;
    Numba's torch-tensor launch path failing is Numba's note, not a verdict on the translation)."""
    bad = []
    for v in case_result["variants"]:
        g = v["gate"]
        counts = v["role"] in ("translation", "generic") or (v["default"] and v["role"] == "numba")
        if g["status"] in ("mismatch", "error") and counts:
            bad.append(f"{case_result['kernel']} size {case_result['size']}: {v['name']}: {g['detail']}")
    return bad


# --------------------------------------------------------------------------- timing one case

def enqueue_count(device_median_us: float | None) -> int:
    """Launches per enqueue measurement: enough to average, few enough that the queued GPU work stays short."""
    return max(10, min(200, int(200_000 / max(device_median_us or 1.0, 1.0))))


def run_case(case: Case, timer, sampling: Sampling = Sampling(), host_sampling: Sampling | None = None,
             warmups: int = 3, progress=None) -> dict:
    """Check, then time every variant that passed: the case's result as plain data (JSON-ready)."""
    say = progress or (lambda *_: None)
    say(case, "checking outputs")
    checked = gate(case)
    timed = [v for v in case.variants if checked[v.name]["ok"]]
    byname = {v.name: v for v in timed}
    for _ in range(warmups):
        for v in timed:
            v.launch()
    timer.sync()
    names = [v.name for v in timed]
    # Numba on torch tensors runs the baseline's kernel: only its host cost differs, so it is not device-timed
    kernels = [v.name for v in timed if v.role != "numba-torch"]
    device, stable = sample_until_stable(kernels, lambda n: timer.device_us(byname[n]), sampling,
                                         on_batch=lambda n: say(case, f"device time, {n} samples each"))
    device = {n: summary(s) for n, s in device.items()}
    same_kernel = device.get(baseline_name(case))
    say(case, "host overhead")
    # host timings jitter more than device ones: a looser settling rule and a shorter cap
    host_sampling = host_sampling or Sampling(min_samples=20, rel_tol=0.01,
                                              max_seconds=max(5.0, sampling.max_seconds / 3))
    e2e, e2e_stable = sample_until_stable(names, lambda n: timer.end_to_end_us(byname[n]), host_sampling)
    e2e = {n: summary(s) for n, s in e2e.items()}
    enqueue = {n: statistics.median(timer.enqueue_us(byname[n], enqueue_count((device.get(n) or same_kernel
                                                                               or {}).get("median_us")))
                                    for _ in range(5)) for n in names}
    return assemble(case, checked, device, e2e, enqueue, stable, e2e_stable)


def baseline_name(case: Case, role: str = "numba") -> str | None:
    return next((v.name for v in case.variants if v.role == role and v.default), None)


def assemble(case: Case, checked: dict, device: dict, e2e: dict, enqueue: dict, stable: bool,
             e2e_stable: bool) -> dict:
    """Put the measurements together: per variant, its summaries, throughput and ratios to the baseline."""
    base, torch_base = baseline_name(case), baseline_name(case, "numba-torch")
    variants = []
    for v in case.variants:
        d, h = device.get(v.name), e2e.get(v.name)
        row = {"name": v.name, "role": v.role, "params": v.params, "specialised": v.specialised,
               "default": v.default, "gate": checked[v.name], "device": d, "end_to_end": h,
               "enqueue_us": enqueue.get(v.name)}
        if d:
            row.update(throughput(d["median_us"], case.flops, case.nbytes))
        if base in device and d:
            row["vs_numba_device"] = ratio(device[base], d)
            row["vs_numba_end_to_end"] = ratio(e2e[base], h)
        if torch_base in e2e and h:
            # what a caller who holds torch tensors (the lecture's users) saves per call, host cost included
            row["vs_numba_torch_end_to_end"] = ratio(e2e[torch_base], h)
        variants.append(row)
    result = {"kernel": case.kernel, "size": case.size, "defaults": case.defaults, "flops": case.flops,
              "bytes": case.nbytes, "launch": case.launch, "baseline": base, "torch_baseline": torch_base,
              "stable": stable, "end_to_end_stable": e2e_stable, "variants": variants, "notes": list(case.notes)}
    result["autotune"] = autotune(case, device)
    result["failures"] = gate_failures(result)
    return result


def autotune(case: Case, device: dict) -> dict | None:
    """The fastest specialisation value (device time median) among the translation's, ties within the spread."""
    if not case.defaults:
        return None
    candidates = {v.name: (v.params, device.get(v.name)) for v in case.variants if v.role == "translation"}
    return pick_fastest(candidates)


def tuning_table(results: list[dict]) -> dict:
    """{kernel: {param: {size: value}}} of the autotune picks, for the tuning file."""
    table = {}
    for r in results:
        pick = r.get("autotune")
        if pick:
            for param, value in pick["params"].items():
                table.setdefault(r["kernel"], {}).setdefault(param, {})[str(r["size"])] = int(value)
    return table
