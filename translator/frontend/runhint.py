"""Hints for what only running the module's code gives (a kernel made in a test method or a helper a test calls,
a factory's arguments, a kernel's first launch): --import-module runs that code (frontend/runentries.py), so
the hint names it and what it will run; where the import mode already ran it without reaching the kernel, the
hint says what each run did instead."""

from __future__ import annotations

import re

from .entries import MAIN_BLOCK, reaching, top_launch


def _spelled(entry: str) -> str:
    return "its `if __name__ == \"__main__\":` block" if entry == MAIN_BLOCK else f"'{entry}'"


def run_hint(info, node) -> str | None:
    """How the import mode gets what the function at NODE (a FunctionDef of INFO's module) needs, or None
    where no test, main() or __main__ block of the module reaches it."""
    module = info.module_info
    where = module.reporter.location(node)
    if where.path != module.path:  # a function of another file: its own module's code would have to run
        return None
    top_level = any(stmt is node for stmt in module.module.body)
    launch = top_launch(module.source, node.name.value) if top_level else None
    if launch is not None and module.imported is not None and \
            launch in (module.imported[0].get("untyped_launches") or []):  # seen at that launch, and untyped
        stood_in = module.imported[0].get("stand_ins") or []
        reached = f"the import reached its launch at line {launch}, whose arguments are "
        if not stood_in:
            return reached + "values Numba's typeof does not know"
        return (reached + f"values of {', '.join(stood_in)}, which {'is' if len(stood_in) == 1 else 'are'} not "
                f"installed here and stood in for: install {'it' if len(stood_in) == 1 else 'them'} where numba2cuda "
                "runs")
    if launch is not None and module.imported is None:  # a script launches it as it is imported
        if module.import_failed is not None:
            return (f"--import-module would see its launch at line {launch}, but importing the module failed (the "
                    "note says why)")
        return (f"translate with --import-module: numba2cuda then imports the module as Numba would and reads the "
                f"types of its launch at line {launch} (the launch itself is not run)")
    runs = reaching(module.source, node.name.value, where.line)
    if not runs:
        return None
    if module.import_failed is not None:
        return (f"--import-module would run {_spelled(runs[0])}, which reaches it, but importing the module failed "
                "(the note says why)")
    if module.imported is not None:
        ran = [r for r in module.imported[0].get("runs") or [] if r["entry"] in runs]
        if not ran:
            return None
        said = "; ".join(f"{_spelled(r['entry'])} {r['outcome']}" for r in ran[:3])
        more = f" (and {len(ran) - 3} more)" if len(ran) > 3 else ""
        # a test skipped under the simulator, or one calling what its kernels lack there (bfloat16 on an older
        # GPU, a dispatcher's .compile()), runs on Numba's real target
        gpu = ", or translate with --import-module-gpu on a machine with a GPU (Numba's real target runs it)" \
            if module.imported[0].get("simulator") and any(_simulator_stopped(r["outcome"]) for r in ran) else ""
        return (f"the import mode ran the code that reaches it, and no launch gave it: {said}{more}; make that "
                f"code run under the CUDA simulator{gpu}, or pass the value as a kernel argument")
    others = len(runs) - 1
    named = _spelled(runs[0]) + (f" (or, if that does not launch it, {others} other{'s' * (others > 1)} that "
                                 f"reach{'es' * (others == 1)} it)" if others else "")
    return (f"translate with --import-module: numba2cuda then imports the module, runs {named} under the CUDA "
            "simulator up to the kernel's first launch, and reads what Numba reads then")


def _simulator_stopped(outcome: str) -> bool:
    """Whether a run's OUTCOME is the simulator's doing: a skip (skip_on_cudasim, a GPU feature the test checks
    for), or what the simulator's objects lack (FakeCUDAKernel has no .compile())."""
    return outcome.startswith("skipped") or bool(re.search(r"(?i)simulat|cudasim|\bFake", outcome))


def with_run_hint(info, node, hint: str) -> str:
    """HINT, after the import mode's way to what the function at NODE needs, where there is one (run_hint)."""
    run = run_hint(info, node) if info is not None else None
    return f"{run}; or {hint}" if run else hint
