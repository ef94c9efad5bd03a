"""module path + options -> VerifyResult: one verify run from the plan to the verdict (check.py checks each case;
session.py holds the runners and the follow-ups; original.py runs the reference)."""

from __future__ import annotations

import time

from ..analysis.limits import DEFAULT_LIMIT
from ..errors import UserError
from ..lower.program import Options
from .check import DISTRIBUTIONS, check_case
from .oneoff import order_oneoff_args
from .original import run_reference
from .result import VerifyResult
from .runners import cuda_available, device_shared_limit
from .session import Session


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
           device: str = "cpu", also_cpu: bool = False, dists=DISTRIBUTIONS, oneoff: dict | None = None,
           tolerance: tuple | None = None, sanitize: bool = False, fail_fast: bool = False) -> VerifyResult:
    """Translate (or take `cu_text`), build it for `device`, and check it against the Numba original.

    Cases: every example (example(), or example_<kernel>() per kernel) x seed x size (the module's
    VERIFY_SIZES, else "small"; `sizes` overrides) x specialisation value (each template value the
    example takes as a keyword, plus one the generic kernel runs; tile-1 and tile+1 added to the sizes),
    and for the first seed, size and value the redraws `dists` (plan.py). `oneoff` describes a single
    launch instead (cli --args). device: "cpu" (the CPU runtime; reference: the simulator), "cuda" (the
    GPU; reference: the original on the GPU), or "auto". `reference` reuses an earlier result's
    `.reference` (it does not depend on the translation). `tolerance`: (rtol, atol) instead of the
    derived budgets. progress(phase, done, total, case) as it goes. fail_fast: stop at the first NOT
    EQUIVALENT case (the verdict is known; the LLM gate and the planted-translation tests want no more).
    Raises UserError for problems with the input; returns a VerifyResult whose `verdict` is the answer.
    """
    if seeds < 1:
        raise UserError("verify: error: --seeds must be at least 1")
    device = resolve_device(device)
    with Session(str(path), device, cu_text, cu_path, options or Options(), also_cpu, kernel) as s:
        result = VerifyResult(str(path), cu_path or "fresh translation", s.runner.device)
        s.static_checks(result)
        if oneoff is not None:
            oneoff = dict(oneoff, args=order_oneoff_args(oneoff, s.kernels, kernel))
        if reference is None:
            cfg = s.config(list(range(seed, seed + seeds)), sizes, sim_max_threads, dists, oneoff)
            reference, info = run_reference(str(path), cfg, progress=(lambda d, t: progress("original", d, t, None))
                                            if progress else None)
            for k, ps in cfg["specs"].items():
                for p in info["unswept"]:
                    if p in ps:
                        result.notes.append(f"the translation specialises {p} in {{{', '.join(map(str, ps[p]))}}} but "
                                            f"the example takes no {p}= keyword: only the values it chooses were run")
            result.notes += [f"skipped {d}" for d in info["dropped"]] + info.get("notes", [])
        result.reference = reference
        limit = device_shared_limit() if device == "cuda" else DEFAULT_LIMIT
        for n, (meta, arrays) in enumerate(reference):
            fn = s.kernel_of(meta, arrays)
            t0 = time.perf_counter()
            case = check_case(s.runner, meta, arrays, s.labels[meta["kernel"]], device, fn, limit, s.cpu_runner,
                              s.facts.get(meta["kernel"]), tolerance, s.suspect(meta["kernel"], result.notes, meta))
            case.seconds = time.perf_counter() - t0
            result.cases.append(case)
            if progress:
                progress("translation", n + 1, len(reference), case)
            if fail_fast and case.problems and not any("data race on" in p for p in case.problems):
                break
        s.attribute_to_original(result)
        s.corroborate_reference(result, tolerance)
        if sanitize:
            s.sanitize(result)
    return result
