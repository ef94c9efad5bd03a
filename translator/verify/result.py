"""Verdicts: per output, per case and per run, with what JSON reports say of them.

A case is NOT EQUIVALENT when the translation is shown to differ from the original (an output, a read-only
input, a fault, a race, an out-of-bounds access, a narrowing), UNDECIDED when its reference cannot be
trusted there (the original fails on the example's own inputs, or the simulator cannot stand for Numba on
the GPU there) and nothing else is wrong, EQUIVALENT otherwise. A run is NOT EQUIVALENT if any case is,
else UNDECIDED if any case is (or none could be checked), else EQUIVALENT. Exit codes: 0, 1, 3 (2 is a
usage or translation error).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import EXIT_OK, EXIT_UNDECIDED, EXIT_VERDICT
from .compare import ArrayReport

EQUIVALENT, NOT_EQUIVALENT, UNDECIDED = "EQUIVALENT", "NOT EQUIVALENT", "UNDECIDED"
EXIT_CODES = {EQUIVALENT: EXIT_OK, NOT_EQUIVALENT: EXIT_VERDICT, UNDECIDED: EXIT_UNDECIDED}


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
    distribution: str = "example"  # example()'s inputs, or a redraw ("large", "ints", "scalars", ...)
    redrawn: list = field(default_factory=list)  # the arguments a redraw changed
    example: str = "example"
    outputs: list[OutputResult] = field(default_factory=list)
    cpu_outputs: list[OutputResult] = field(default_factory=list)  # --also-cpu: the CPU runtime vs the GPU original
    problems: list[str] = field(default_factory=list)  # NOT EQUIVALENT: each names what and where
    undecided: list[str] = field(default_factory=list)  # why the reference cannot decide this case
    notes: list[str] = field(default_factory=list)  # information (not a verdict)
    inputs_unchanged: bool = True
    runs_identical: bool = True
    runs: str = ""  # how the two runs differed (fills, poison, thread order)
    seconds: float = 0.0  # the translation's two runs and the comparison

    @property
    def verdict(self) -> str:
        return NOT_EQUIVALENT if self.problems else UNDECIDED if self.undecided else EQUIVALENT

    @property
    def ok(self) -> bool:
        return self.verdict == EQUIVALENT


@dataclass
class VerifyResult:
    path: str
    source: str  # "fresh translation" or the --cu path
    device: str = "CPU runtime"
    cases: list[CaseResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # whole-translation findings (static checks, sanitizer)
    reference: list = field(default_factory=list, repr=False)  # [(meta, arrays)]: reusable via verify(reference=)

    @property
    def verdict(self) -> str:
        if self.problems or any(c.verdict == NOT_EQUIVALENT for c in self.cases):
            return NOT_EQUIVALENT
        if not self.cases or any(c.verdict == UNDECIDED for c in self.cases):
            return UNDECIDED
        return EQUIVALENT

    @property
    def ok(self) -> bool:
        return self.verdict == EQUIVALENT

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    def to_json(self) -> dict:
        def outputs(lst):
            return [{"name": o.name, "argument": o.index, **o.report.to_json()} for o in lst]
        return {
            "path": self.path, "translation": self.source, "device": self.device, "verdict": self.verdict,
            "equivalent": self.ok, "problems": self.problems,
            "cases": [{
                "kernel": c.kernel, "example": c.example, "seed": c.seed, "size": c.size, "params": c.params,
                "distribution": c.distribution, "redrawn": c.redrawn, "specialised": c.specialised,
                "griddim": c.griddim, "blockdim": c.blockdim, "shared": c.shared, "reference": c.reference,
                "verdict": c.verdict, "equivalent": c.ok, "problems": c.problems, "undecided": c.undecided,
                "notes": c.notes, "inputs_unchanged": c.inputs_unchanged, "runs_identical": c.runs_identical,
                "runs": c.runs, "seconds": round(c.seconds, 4),
                "outputs": outputs(c.outputs), "cpu_runtime_vs_gpu": outputs(c.cpu_outputs),
            } for c in self.cases],
            "notes": self.notes,
        }
