"""`numba2cuda bench` arguments -> bench_module() run, table, JSON, plot, recorded autotune picks and exit code."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from ..atomic import write_atomically
from ..errors import EXIT_OK, EXIT_VERDICT, UserError
from ..llm.config import add_llm_options
from ..runtime.tuning import tuning_path, write_tuning
from ..verify.check import parse_sizes
from . import report as bench_report
from .case import NOTICE, tuning_table
from .stats import Sampling


def add_parser(sub) -> None:
    """The `bench` subcommand (translator/cli.py assembles it with the others)."""
    b = sub.add_parser(
        "bench", help="time the Numba original against the translation on the GPU, side by side",
        description="Run the module's example() at its benchmark sizes (BENCH_SIZES, else \"bench\") on the GPU: "
                    "the Numba original, the translation at every specialisation and its generic kernel, and "
                    "the references example() names, on one stream with CUDA events, the L2 flushed before "
                    "every timed run. Outputs are checked once first; a wrong variant is never timed. This "
                    "imports and runs FILE. Exit 0: all variants correct; 1: a translation is wrong; 2: usage "
                    "error or no GPU.")
    b.add_argument("file", help="a Python module with @cuda.jit kernels and an example(rng, size) function")
    b.add_argument("--kernel", metavar="K", help="only the kernel K (the one example() runs)")
    b.add_argument("--sizes", metavar="LIST", help="sizes passed to example(rng, size), e.g. bench,4096x4096 "
                                                    "(default: the module's BENCH_SIZES, else bench)")
    b.add_argument("--types", metavar="SPEC", help="argument types for the translation, as for translate")
    b.add_argument("--seed", type=int, default=0, help="seed of example()'s random generator (default 0)")
    b.add_argument("--json", metavar="PATH", help="write the results as JSON (atomically; - for standard output, "
                                                   "the table then goes to standard error)")
    b.add_argument("--md", metavar="PATH", help="write the results as a Markdown report, every column (- for "
                                                 "standard output)")
    b.add_argument("--wide", action="store_true", help="the table with every column (default: those that fit 120 "
                                                      "columns; --json and --md have them all)")
    b.add_argument("--plot", metavar="PATH.png", help="write a bar chart of the speedups (needs matplotlib)")
    b.add_argument("--autotune", action="store_true", help="report the fastest specialisation value per size")
    b.add_argument("--record", nargs="?", const=True, metavar="PATH",
                   help="with --autotune (implied): record the picks for numba2cuda.load()'s kernel.tuned() "
                        "(default: FILE's <stem>.n2c-tune.json beside it; merged, atomically)")
    b.add_argument("--min-reps", type=int, default=30, metavar="N", help="timed runs per variant at least (default 30)")
    b.add_argument("--max-seconds", type=float, default=30.0, metavar="S",
                   help="stop sampling a case's device times after S seconds even if not stable (default 30)")
    b.add_argument("--no-references", action="store_true", help="skip the references example() names")
    b.add_argument("--cu", metavar="PATH", help="time this (hand-tuned) .cu instead of a fresh translation; its "
                                                 "outputs are checked against the original first, as always")
    add_llm_options(b)
    b.set_defaults(func=cmd_bench)


def require_plotting() -> None:
    try:
        import matplotlib  # noqa: F401  (only whether it imports)
    except ImportError:
        raise UserError("numba2cuda bench: error: --plot needs matplotlib\n    hint: pip install "
                        "'numba2cuda[bench]' (or matplotlib), or plot later from --json with "
                        "python3 -m translator.bench.report RESULT.json --plot OUT.png") from None


def require_cuda() -> None:
    """Refuse early, before importing the module or building anything, when there is no GPU."""
    try:
        import torch
    except ImportError:
        raise UserError("numba2cuda bench: error: PyTorch is not installed\n    hint: pip install torch "
                        "(the translation runs as a torch extension)") from None
    if not torch.cuda.is_available():
        raise UserError("numba2cuda bench: error: no CUDA GPU (torch.cuda.is_available() is False): bench "
                        "times kernels on a GPU\n    hint: run it on a machine with an NVIDIA GPU; "
                        "`numba2cuda verify FILE` checks a translation without one")
    try:
        from numba import cuda
    except ImportError:
        raise UserError("numba2cuda bench: error: numba-cuda is not installed: bench times the Numba "
                        "original too\n    hint: pip install numba-cuda") from None
    from numba import config

    if getattr(config, "ENABLE_CUDASIM", 0):
        raise UserError("numba2cuda bench: error: NUMBA_ENABLE_CUDASIM is set: bench times the Numba original on "
                        "the GPU, not in the simulator\n    hint: unset NUMBA_ENABLE_CUDASIM")
    if not cuda.is_available():
        raise UserError("numba2cuda bench: error: Numba sees no CUDA GPU (numba.cuda.is_available() is False)")


def cmd_bench(args) -> int:

    if args.min_reps < 1 or args.max_seconds <= 0:
        raise UserError("bench: error: --min-reps must be at least 1 and --max-seconds positive")
    if args.json == "-" and args.md == "-":
        raise UserError("bench: error: --json - and --md - would both write to standard output; give one a file")
    if args.plot:
        require_plotting()
    require_cuda()
    from .cuda import bench_module

    from ..llm.backend import verify_translation
    from ..verify.cli import read_cu

    report = sys.stderr if "-" in (args.json, args.md) else sys.stdout  # stdout then holds the JSON or Markdown alone
    print(NOTICE.format(path=args.file), file=report, flush=True)
    sampling = Sampling(min_samples=args.min_reps, max_seconds=args.max_seconds)
    with verify_translation(args) as args:  # where the rules reject a kernel: the model's verified translation
        cu_text = read_cu(args.cu) if args.cu else None
        doc = bench_module(args.file, kernel=args.kernel, sizes=parse_sizes(args.sizes) if args.sizes else None,
                           types=args.types, seed=args.seed, sampling=sampling, references=not args.no_references,
                           progress=bench_report.Progress(sys.stderr), cu_text=cu_text)
    doc["command"] = "numba2cuda " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    print(bench_report.format_report(doc, autotune=bool(args.autotune or args.record), wide=args.wide), file=report)
    if args.json == "-":
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
    elif args.json:
        write_atomically(Path(args.json), json.dumps(doc, indent=1) + "\n")
    if args.md:
        markdown = bench_report.format_markdown(doc, autotune=bool(args.autotune or args.record))
        if args.md == "-":
            sys.stdout.write(markdown)
        else:
            write_atomically(Path(args.md), markdown)
    if args.plot:
        bench_report.plot_speedups(doc, args.plot)
    if args.record:
        target = tuning_path(args.file) if args.record is True else Path(args.record)
        table = tuning_table(doc["cases"])
        if table:
            write_tuning(target, table, env=doc.get("env"), module=Path(args.file).name)
            print(f"recorded the autotune picks in {target}", file=report)
        else:
            print("note: nothing to record: the translation has no specialised parameters example() sweeps",
                  file=report)
    return EXIT_OK if doc["ok"] else EXIT_VERDICT
