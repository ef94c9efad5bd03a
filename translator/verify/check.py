"""numba module -> equivalence verdict: its examples run by the Numba original and by the translation.

The reference side imports and runs the user's module (the translator never does): a subprocess
(original.py -> reference.py) calls each example per case and runs the Numba original on the GPU, or
without one in Numba's CUDA simulator corrected to compute what Numba computes (sim_fidelity.py); where
the original cannot run, example()'s NumPy `expected` is the reference, and with neither the case is
UNDECIDED. The translation runs twice per case in a child process (runners.py): each run pre-fills the
arrays the kernel only writes with its own value (NaN / 1e30, or two integer sentinels) and, on the CPU,
poisons uninitialised memory with its own byte (0xFF, 0x7F) and runs a block's threads in its own order
(forward, backward), with every access bounds-checked and races detected (runtime/n2c_cpu_check.h). The
original ran with the same pre-fills, so elements it leaves untouched must stay untouched; arrays the
kernel also reads (found from the IR) keep the example's data on both sides. Outputs are compared with
a ULP budget derived from what the kernel computes (facts.py), or the user's tolerances.
"""

from __future__ import annotations

import numpy as np

from ..analysis.limits import DEFAULT_LIMIT, shared_problem
from ..errors import UserError
from ..lower.names import entry_name
from ..runtime.records import unit_of
from .compare import as_words, compare_arrays, field_bytes, first_bit_difference, format_value
from .plan import REDRAWS
from .result import CaseResult, OutputResult
from .runners import LaunchFailed

DISTRIBUTIONS = REDRAWS  # the redraws run beside example()'s own inputs (plan.py says what each is)
FILLS = (  # (float fill, index of the integer sentinel, poison byte, thread order)
    (float("nan"), 0, 0xFF, 0),  # floats read NaN, integers -1; threads in order
    (1e30, 1, 0x7F, 1),  # a large positive: a max() reduction cannot hide it; threads backward
)
NOTICE = ("note: verify imports and runs {path} (its example() and the Numba original, {where}, in a "
          "subprocess); the translator itself never imports or runs your module.")


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


def launch_config(meta: dict) -> tuple:
    """(grid, block, dynamic shared bytes) of a case, as the runners take them."""
    return _tuple(meta["griddim"]), _tuple(meta["blockdim"]), meta["shared"]


def launch_args(meta: dict, inputs: dict, which: int) -> list:
    """Fresh copies of the case's arguments; arrays the kernel only writes pre-filled with fill WHICH."""
    args = []
    for i in range(meta["nargs"]):
        if i in inputs:
            a = inputs[i].copy(order="K")
            if i in meta["outputs"] and i not in meta["inout"]:
                a.fill(_fill_value(meta, i, a.dtype, which))
            args.append(a)
        else:
            v = meta["scalars"][str(i)]
            args.append(complex(*v["complex"]) if isinstance(v, dict) and "complex" in v else v)
    return args


NOT_DECIDED = " (not decided: "  # how an output's disagreement with a suspect reference is marked undecided


def choose_reference(meta: dict, arrays: dict, label: dict, case: CaseResult, suspect: str = ""):
    """[reference outputs under fill 0, under fill 1] and whether they are the original's; None (and the case
    marked undecided) when nothing can stand for the original. SUSPECT: why the original's run may not be
    Numba's (the simulator ran it as written): example()'s expected is then the reference where it gives one
    for every output, as for an original that cannot run here."""
    outputs = meta["outputs"]
    expected = {i: arrays[f"expected{i}"] for i in outputs if f"expected{i}" in arrays}
    status = meta["original"]
    if status == "ok":
        first = {i: arrays[f"orig0_{i}"] for i in outputs}
        second = {i: arrays.get(f"orig1_{i}", first[i]) for i in outputs}
        disagree = []
        for i, e in expected.items():
            r = compare_arrays(e, first[i], meta["rtol"], meta["atol"])
            if not r.ok:
                disagree.append(f"the original itself disagrees with example()'s expected {label[i]} beyond its "
                                f"tolerance ({r.describe_first()})")
        if not (suspect and meta["expected_valid"] and len(expected) == len(outputs)):
            case.notes += [d + "; the original is the reference" for d in disagree]
            return [first, second], True
        case.notes += disagree
        case.reference = f"NumPy expected ({suspect}: the simulator's run is not trusted as Numba's)"
        return [expected, expected], False
    if meta["expected_valid"] and expected:
        missing = [label[i] for i in outputs if i not in expected]
        if missing:
            case.notes.append(f"not compared (no expected value and no original): {', '.join(missing)}")
        case.reference = f"NumPy expected (the original {_status(status)})"
        return [expected, expected], False
    case.undecided.append(f"no reference: the original {_status(status)}, and example() gives no expected")
    return None, False


def _status(status: str) -> str:
    if status.startswith("skipped:"):
        return "was " + status
    return f"cannot run here ({status})"


def budget_for(i: int, meta: dict, facts, device: str, from_original: bool, tolerance, spread: int = 0) -> dict:
    """compare_arrays' acceptance for output I: the user's tolerances, example()'s against a NumPy expected, or
    a ULP budget derived from what the kernel computes, with its reason."""
    if tolerance is not None:
        rtol, atol = tolerance
        return {"rtol": rtol, "atol": atol, "budget": "the tolerances given (--rtol/--atol)"}
    if not from_original:
        return {"rtol": meta["rtol"], "atol": meta["atol"], "budget": "example()'s tolerances (NumPy expected)"}
    ulps, why = facts.ulp_budget() if facts is not None else (0, "")
    reasons = [f"{ulps} ULP: {why}"] if facts is not None else []
    scale = 0
    if device == "cuda" and facts is not None and facts.contractible:
        ulps, scale = ulps + 4, 4
        reasons.append("4 ULP (or 4 spacings of the output's largest value, where cancellation magnifies it): a*b+c "
                       "may be contracted into an FMA differently by nvcc and by NVVM")
    if facts is not None and i in facts.float_atomic:
        ulps += 2 * spread + 1
        reasons.append(f"{2 * spread + 1} ULP: accumulated with float atomics, whose order is unspecified: the "
                       f"translation's two runs (threads forward, backward) differ by {spread} ULP; twice that, plus 1")
    return {"ulps": ulps, "scale_ulps": scale, "budget": "; ".join(reasons) or "bit-identical"}


def run_twice(case: CaseResult, runner, meta: dict, inputs: dict, label: dict):
    """Both runs' arguments after the launch, or None when a run failed (recorded as a problem)."""
    runs = []
    for which, (_, _, poison, order) in enumerate(FILLS):
        try:
            after = runner.run(meta["kernel"], *launch_config(meta), launch_args(meta, inputs, which), poison, order)
        except LaunchFailed as exc:
            case.problems.append(f"the translation on the {runner.device} ({'first' if which == 0 else 'second'} run: "
                                 f"{case.runs.split('; ')[which]}): {exc}")
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
               shared_limit: int = DEFAULT_LIMIT, cpu_runner=None, facts=None, tolerance=None,
               suspect: str = "") -> CaseResult:
    inputs = {int(k[3:]): v for k, v in arrays.items() if k.startswith("arg")}
    label = {i: f"{param_names[i]} (arg {i})" if i < len(param_names) else f"arg {i}" for i in range(meta["nargs"])}
    where = "Numba original on the GPU" if device == "cuda" else "Numba original in the CUDA simulator"
    case = CaseResult(meta["kernel"], meta["seed"], meta["griddim"], meta["blockdim"], meta["shared"], where,
                      meta.get("size", "small"), meta.get("params", {}), meta.get("specialised", {}),
                      meta.get("distribution", "example"), meta.get("redrawn", []), meta.get("example", "example"))
    case.runs = ("NaN fill, poison 0xFF, threads in order; 1e30 fill, poison 0x7F, threads backward"
                 if runner.poisons else "NaN fill; 1e30 fill")
    if kernel_ir is not None:
        limit_where = "the GPU gives a block without opting in" if device == "cuda" else "a CUDA block gets by default"
        problem = shared_problem(kernel_ir, meta["shared"], shared_limit, limit_where)
        if problem:
            case.problems.append(problem)
            return case
    refs, from_original = choose_reference(meta, arrays, label, case, suspect)
    runs = run_twice(case, runner, meta, inputs, label)
    if runs is None or refs is None:
        return case
    for i in meta["outputs"]:
        if i not in refs[0]:
            continue
        spread = 0
        if facts is not None and i in facts.float_atomic and runs[0][i].dtype.kind == "f":
            spread = compare_arrays(runs[0][i], runs[1][i], ulps=0).max_ulp or 0
        how = budget_for(i, meta, facts, device, from_original, tolerance, spread)
        for which in (0, 1):
            r = compare_arrays(refs[which][i], runs[which][i], **how)
            if which == 0:
                case.outputs.append(OutputResult(label[i], i, r))
            if not r.ok:
                what = f"output {label[i]}" + (" (second run)" if which else "") + f": {r.describe_first()}"
                (case.undecided if suspect else case.problems).append(
                    what + (f"{NOT_DECIDED}{suspect})" if suspect else ""))
                break
        _check_runs_agree(case, meta, refs, runs, i, label, how)
    if cpu_runner is not None and device == "cuda":
        check_cpu_agreement(case, cpu_runner, meta, inputs, label, refs[0])
    return case


def _check_runs_agree(case, meta, refs, runs, i, label, how) -> None:
    """Where the original wrote the same bits under both pre-fills, the two runs must agree too."""
    a, b = runs[0][i], runs[1][i]
    same_ref = np.ascontiguousarray(refs[0][i]).view(np.uint8).reshape(a.size, -1) == \
        np.ascontiguousarray(refs[1][i]).view(np.uint8).reshape(a.size, -1)
    mask = same_ref.all(axis=1).reshape(a.shape) if a.size else np.zeros(a.shape, bool)
    if "ulps" in how and how["ulps"] and a.dtype.kind == "f":
        r = compare_arrays(a[mask], b[mask], **how)
        if not r.ok:
            case.runs_identical = False
            case.problems.append(f"output {label[i]} differs between the two runs of the translation ({case.runs}) "
                                 f"beyond its budget: {r.describe_first()}")
        return
    if a.dtype.names is not None:  # records: their words or bytes, the padding between fields left out
        keep = field_bytes(a.dtype) if unit_of(a.dtype).itemsize == 1 else True
        a, b = as_words(a) * keep, as_words(b) * keep
        mask = np.broadcast_to(mask.reshape(mask.shape + (1,) * (a.ndim - mask.ndim)), a.shape)
    diff = first_bit_difference(np.where(mask, a, 0), np.where(mask, b, 0)) if a.size else None
    if diff is not None:
        case.runs_identical = False
        idx, x, y = diff
        fills = [prefill(meta, i, runs[k][i], k) for k in (0, 1)]
        if all(f is not None for f in fills) and only_unwritten(np.where(mask, runs[0][i], fills[0]), np.where(mask, runs[1][i], fills[1]),
                                                *fills):
            # not an order the original depends on (verify would call that undecided): a thread that stopped
            case.problems.append(f"output {label[i]}: the translation leaves elements unwritten that the original "
                                 f"writes (each run's pre-fill stays): first at index {idx}: {format_value(x)} vs "
                                 f"{format_value(y)} ({case.runs})")
            return
        case.problems.append(f"output {label[i]} differs between the two runs of the translation ({case.runs}): "
                             f"first difference at index {idx}: {format_value(x)} vs {format_value(y)}; it reads "
                             "uninitialised memory, depends on the order threads run in, or skips elements")


def _fill_value(meta, i, dtype, which):
    """What fill WHICH pre-fills output I with: a float's NaN or 1e30, an integer's sentinel."""
    return FILLS[which][0] if dtype.kind in "fc" else meta["fills"].get(str(i), [0, 0])[which]


def prefill(meta, i, a, which):
    """The array a run's output I (A, after it) held before the launch (fill WHICH), or None where it held drawn
    contents (an in-place update, a record)."""
    if i in meta["inout"] or a.dtype.names is not None:
        return None
    return np.full(a.shape, _fill_value(meta, i, a.dtype, which), dtype=a.dtype)


def only_unwritten(run0, run1, fill0, fill1) -> bool:
    """Whether the elements two runs leave different are those each left as its pre-fill: the translation skipped
    writing them (a thread that stopped early), which is its own doing, not an order the original depends on."""
    if not all(isinstance(a, np.ndarray) for a in (run0, run1, fill0, fill1)) or run0.shape != fill0.shape:
        return False
    rows = [np.ascontiguousarray(a).reshape(-1).view(np.uint8).reshape(a.size, -1) for a in (run0, run1, fill0, fill1)]
    differ = (rows[0] != rows[1]).any(axis=1)
    kept = (rows[0] == rows[2]).all(axis=1) & (rows[1] == rows[3]).all(axis=1)
    return bool(differ.any()) and bool(kept[differ].all())


def check_cpu_agreement(case: CaseResult, cpu_runner, meta, inputs, label, reference) -> None:
    """--also-cpu: the CPU runtime on the same case. Its faults, races and out-of-bounds accesses are the CPU
    tier's own verdict (a failure); its distance from the GPU original is information (FMA contraction)."""
    try:
        after = cpu_runner.run(meta["kernel"], *launch_config(meta), launch_args(meta, inputs, 0), FILLS[0][2], 0)
    except LaunchFailed as exc:
        case.problems.append(f"the translation on the CPU runtime: {exc}")
        return
    for i in meta["outputs"]:
        if i in reference:
            r = compare_arrays(reference[i], after[i], meta["rtol"], meta["atol"])
            case.cpu_outputs.append(OutputResult(label[i], i, r))


def specialisations(program, kernel: str | None = None) -> dict:
    """{param: [values]} of the translation's template specialisations (e.g. {"tw": [8, 16, 32]})."""
    out = {}
    for ps in kernel_specialisations(program, kernel).values():
        for p, values in ps.items():
            out.setdefault(p, set()).update(values)
    return {k: sorted(v) for k, v in out.items()}


def kernel_specialisations(program, kernel: str | None = None) -> dict:
    """{kernel: {param: [values]}} of the translation's template specialisations, by the name the original's
    launch gives (a kernel with several signatures: its Python name)."""
    out = {}
    for fn in program.kernels:
        name_of = getattr(fn, "python_name", None) or entry_name(fn)
        if kernel and kernel not in (name_of, entry_name(fn)):
            continue
        for name, _, values in getattr(fn, "template_params", []):
            out.setdefault(name_of, {}).setdefault(name, set()).update(values)
    return {k: {p: sorted(v) for p, v in ps.items()} for k, ps in out.items()}
