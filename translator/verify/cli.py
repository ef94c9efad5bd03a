"""`numba2cuda verify` arguments -> verify() call, progress, report, JSON/JUnit files and exit code."""

from __future__ import annotations

import json
import sys
from contextlib import ExitStack
from pathlib import Path

from ..frontend.importmode import import_mode_of
from .. import progress
from ..atomic import write_atomically
from ..errors import UserError
from ..lower.options import TYPES_HELP, read_types
from ..lower.program import Options
from .check import DISTRIBUTIONS, NOTICE, parse_sizes
from .run import resolve_device, verify
from .oneoff import ARGS_HELP, parse_oneoff
from .report import format_report, junit_xml


def add_parser(sub):
    """The `verify` subcommand; cli.py adds the LLM backend's options and wraps cmd_verify with it."""
    v = sub.add_parser("verify", help="check the translation against the Numba original on the module's examples",
                       description="Run the module's examples (example(rng, size), or example_<kernel>(rng, size) "
                                   "per kernel; per seed, size, specialisation value and redrawn inputs) through the "
                                   "Numba original (on the GPU, or in the CUDA simulator corrected to compute what "
                                   "Numba computes) and through the translation (on the GPU, or the CPU runtime with "
                                   "every access bounds-checked and races detected), and compare. This imports and "
                                   "runs FILE; the translator itself never does. Exit 0: equivalent; 1: not "
                                   "equivalent; 3: undecided (the original cannot be trusted or run there: the "
                                   "reason is printed); 2: usage or translation error.")
    add_verify_arguments(v)
    v.set_defaults(func=cmd_verify)
    return v


def add_verify_arguments(v) -> None:
    v.add_argument("file", help="a Python module with @cuda.jit kernels and example(rng, size) (or "
                                "example_<kernel>(rng, size) per kernel)")
    v.add_argument("--kernel", metavar="K", help="only the kernel K (default: every kernel with an example)")
    v.add_argument("--types", metavar="SPEC", help=TYPES_HELP)
    v.add_argument("--device", choices=["cpu", "cuda", "auto"], default="auto",
                   help="where the translation runs: cpu (the CPU runtime; reference: the original in Numba's CUDA "
                        "simulator), cuda (the GPU; reference: the original on the GPU), auto (cuda when torch sees "
                        "a GPU; default)")
    v.add_argument("--also-cpu", action="store_true", help="with the GPU: also run the CPU runtime on every case; its "
                                                           "checks (faults, races, bounds) count, its distance from "
                                                           "the GPU original is reported as information")
    v.add_argument("--sanitize", action="store_true", help="with the GPU: also run a few cases under "
                                                           "compute-sanitizer (memcheck, racecheck, synccheck, "
                                                           "initcheck) when it is installed")
    v.add_argument("--seed", type=int, default=0, help="first seed for the examples' random generator (default 0)")
    v.add_argument("--seeds", type=int, default=1, metavar="N", help="run seeds SEED..SEED+N-1 (default 1)")
    v.add_argument("--import-module", action="store_true",
                   help="translate with the module's values as importing it gives them (see translate --help)")
    v.add_argument("--cu", metavar="PATH", help="verify this (hand-edited) .cu file instead of a fresh translation")
    v.add_argument("--sizes", metavar="LIST", help="sizes passed to example(rng, size), e.g. small,1,67 (default: "
                                                    "the module's VERIFY_SIZES plus tile-1/tile+1 per specialisation "
                                                    "value, else small)")
    v.add_argument("--dists", metavar="LIST", default=",".join(DISTRIBUTIONS),
                   help="redraws of the example's inputs run for the first seed and size beside its own: "
                        + ", ".join(DISTRIBUTIONS) + " (default: all; 'none' for the example's only)")
    v.add_argument("--args", metavar="SPEC", help=ARGS_HELP)
    v.add_argument("--grid", metavar="G", help="one-off launch: the grid, e.g. 4 or 8,8")
    v.add_argument("--block", metavar="B", help="one-off launch: the block, e.g. 256 or 16,16")
    v.add_argument("--shared", type=int, default=0, metavar="BYTES", help="one-off launch: dynamic shared memory")
    v.add_argument("--rtol", type=float, help="accept float differences within this relative tolerance instead of "
                                              "the ULP budget verify derives from the kernel")
    v.add_argument("--atol", type=float, help="absolute tolerance, with --rtol (default 0)")
    v.add_argument("--sim-max-threads", type=int, metavar="N", help="run the Numba original in the simulator only "
                   "for launches of at most N threads; larger ones use example()'s NumPy expected (default: the "
                   "module's VERIFY_SIM_MAX_THREADS, else 4096)")
    v.add_argument("-v", "--verbose", action="store_true", help="print every case's table, not only the summary")
    v.add_argument("--json", metavar="PATH", help="also write the results as JSON (atomically; - for stdout)")
    v.add_argument("--junit", metavar="PATH", help="also write JUnit XML, one testcase per case (atomically; "
                                                   "- for stdout)")


def _dists(text: str) -> list[str]:
    if text.strip() == "none":
        return []
    dists = [d.strip() for d in text.split(",") if d.strip()]
    bad = [d for d in dists if d not in DISTRIBUTIONS]
    if bad:
        raise UserError(f"verify: error: --dists: unknown {', '.join(bad)} (known: {', '.join(DISTRIBUTIONS)}, none)")
    return dists


def read_cu(path) -> str:
    """A given (hand-edited) translation, for verify --cu and bench --cu."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{path}: error: cannot read the .cu file: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: error: the .cu file is not UTF-8 text") from None


def options_of(args) -> Options:
    options = Options(kernels=[args.kernel] if args.kernel else [], import_module=import_mode_of(args))
    if getattr(args, "types", None):
        read_types(options, args.types, "verify")
    return options


def progress_bars(stack: ExitStack, file: str):
    """verify's progress callback: one bar over the original's cases, then one over the translation's
    (translator/progress.py: drawn on a terminal's stderr only)."""
    bars = {}

    def update(phase, done, total, case):
        if phase not in bars:
            what = "the original" if phase == "original" else "the translation"
            bars[phase] = stack.enter_context(progress.bar(f"verify {Path(file).name}: {what}", total=total))
        note = None if case is None else f"{case.kernel} {case.distribution}: {case.verdict.lower()}"
        bars[phase].update(completed=done, total=total, note=note)
    return update


def cmd_verify(args) -> int:
    if isinstance(args.file, list):  # several modules, a folder or a glob: one verify per module (batch.py)
        from .batch import verify_batch

        return verify_batch(args)
    device = resolve_device(args.device)
    where = "on the GPU" if device == "cuda" else "in the CUDA simulator"
    to_stdout = "-" in (args.json, args.junit)
    say = (lambda *a, **k: print(*a, file=sys.stderr, **k)) if to_stdout else print
    say(NOTICE.format(path=args.file, where=where))
    cu_text = read_cu(args.cu) if args.cu else None
    if args.sim_max_threads is not None and args.sim_max_threads < 0:
        raise UserError("verify: error: --sim-max-threads must be at least 0")
    if args.atol is not None and args.rtol is None:
        raise UserError("verify: error: --atol needs --rtol (e.g. --rtol 1e-5 --atol 1e-6)")
    oneoff = parse_oneoff(args.args, args.grid, args.block, args.shared, args.rtol, args.atol) if args.args else None
    tolerance = (args.rtol, args.atol or 0.0) if args.rtol is not None else None
    seeds = list(range(args.seed, args.seed + args.seeds))
    say(f"seed{'s' * (len(seeds) != 1)}: {', '.join(map(str, seeds))}; device: {device}; "
        f"translation: {args.cu or 'fresh'}", flush=True)
    with ExitStack() as stack:
        result = verify(args.file, kernel=args.kernel, seed=args.seed, seeds=args.seeds, cu_text=cu_text,
                        cu_path=args.cu, options=options_of(args), sizes=parse_sizes(args.sizes) if args.sizes else None,
                        sim_max_threads=args.sim_max_threads, progress=progress_bars(stack, args.file),
                        device=device, also_cpu=args.also_cpu, dists=_dists(args.dists), oneoff=oneoff,
                        tolerance=tolerance, sanitize=args.sanitize)
    if oneoff is not None and not result.cases:
        raise UserError("verify: error: --args: nothing could be compared: "
                        + ("; ".join(result.notes) or "the launch writes no array and none is marked :out")
                        + "\n    hint: mark the arrays to compare with :out (or :inout for arrays updated in place), "
                          "and give a launch the original can run")
    say(format_report(result, verbose=args.verbose))
    if args.json:
        _write(args.json, json.dumps(result.to_json(), indent=2) + "\n")
    if args.junit:
        _write(args.junit, junit_xml(result))
    return result.exit_code


def _write(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        write_atomically(Path(path), text)
