"""`numba2cuda verify` arguments -> verify() call, report, JSON/JUnit files and exit code."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..frontend.importmode import import_mode_of
from ..atomic import write_atomically
from ..errors import UserError
from ..lower.program import Options
from .check import DISTRIBUTIONS, NOTICE, parse_sizes, resolve_device, verify
from .report import format_report, junit_xml
from .oneoff import ARGS_HELP, parse_oneoff

def add_parser(sub):
    """The `verify` subcommand; cli.py adds the LLM backend's options and wraps cmd_verify with it."""
    v = sub.add_parser("verify", help="check the translation against the Numba original on the module's example()",
                       description="Run the module's example() (per seed, size, specialisation value and input "
                                   "distribution) through the Numba original (on the GPU, or in the CUDA simulator) "
                                   "and through the translation (on the GPU, or the CPU runtime), and compare. This "
                                   "imports and runs FILE; the translator itself never does. Exit 0: equivalent; "
                                   "1: not equivalent; 2: usage or translation error.")
    add_verify_arguments(v)
    v.set_defaults(func=cmd_verify)
    return v


def add_verify_arguments(v) -> None:
    v.add_argument("file", help="a Python module with @cuda.jit kernels and an example(rng, size) function")
    v.add_argument("--kernel", metavar="K", help="only the kernel K (the one example() runs)")
    v.add_argument("--device", choices=["cpu", "cuda", "auto"], default="auto",
                   help="where the translation runs: cpu (the CPU runtime; reference: the original in Numba's CUDA "
                        "simulator), cuda (the GPU; reference: the original on the GPU), auto (cuda when torch sees "
                        "a GPU; default)")
    v.add_argument("--also-cpu", action="store_true", help="with the GPU: also run the CPU runtime on every case and "
                                                           "report how far it is from the GPU original (max ULP)")
    v.add_argument("--seed", type=int, default=0, help="first seed for example()'s random generator (default 0)")
    v.add_argument("--seeds", type=int, default=1, metavar="N", help="run seeds SEED..SEED+N-1 (default 1)")
    v.add_argument("--import-module", action="store_true",
                   help="translate with the module's values as importing it gives them (see translate --help)")
    v.add_argument("--cu", metavar="PATH", help="verify this (hand-edited) .cu file instead of a fresh translation")
    v.add_argument("--sizes", metavar="LIST", help="sizes passed to example(rng, size), e.g. small,1,67 (default: "
                                                    "the module's VERIFY_SIZES plus tile-1/tile+1 per specialisation "
                                                    "value, else small)")
    v.add_argument("--dists", metavar="LIST", default="uniform,large,tiny,negative",
                   help="redraws of example()'s float inputs run for the first seed and size, beside its own "
                        "inputs (default uniform,large,tiny,negative; 'none' for example()'s only)")
    v.add_argument("--args", metavar="SPEC", help=ARGS_HELP)
    v.add_argument("--grid", metavar="G", help="one-off launch: the grid, e.g. 4 or 8,8")
    v.add_argument("--block", metavar="B", help="one-off launch: the block, e.g. 256 or 16,16")
    v.add_argument("--shared", type=int, default=0, metavar="BYTES", help="one-off launch: dynamic shared memory")
    v.add_argument("--rtol", type=float, help="one-off launch: relative tolerance (default: per dtype)")
    v.add_argument("--atol", type=float, help="one-off launch: absolute tolerance (default: per dtype)")
    v.add_argument("--sim-max-threads", type=int, metavar="N", help="run the Numba original in the simulator only "
                   "for launches of at most N threads; larger ones use example()'s NumPy expected (default: the "
                   "module's VERIFY_SIM_MAX_THREADS, else 4096)")
    v.add_argument("--json", metavar="PATH", help="also write the results as JSON (atomically)")
    v.add_argument("--junit", metavar="PATH", help="also write JUnit XML, one testcase per kernel x seed x size x "
                                                   "specialisation (atomically)")


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


def cmd_verify(args) -> int:
    if isinstance(args.file, list):  # several modules, a folder or a glob: one verify per module (batch.py)
        from .batch import verify_batch

        return verify_batch(args)
    device = resolve_device(args.device)
    where = "on the GPU" if device == "cuda" else "in the CUDA simulator"
    print(NOTICE.format(path=args.file, where=where))
    cu_text = read_cu(args.cu) if args.cu else None
    if args.sim_max_threads is not None and args.sim_max_threads < 0:
        raise UserError("verify: error: --sim-max-threads must be at least 0")
    oneoff = parse_oneoff(args.args, args.grid, args.block, args.shared, args.rtol, args.atol) if args.args else None
    seeds = list(range(args.seed, args.seed + args.seeds))
    print(f"seed{'s' * (len(seeds) != 1)}: {', '.join(map(str, seeds))}; device: {device}; "
          f"translation: {args.cu or 'fresh'}", flush=True)

    def progress(done, total, case):  # on stderr, only on a terminal
        if total >= 8 and sys.stderr.isatty():
            print(f"\r  [{done}/{total}] {'ok  ' if case.ok else 'FAIL'}", end="" if done < total else "\n",
                  file=sys.stderr, flush=True)

    result = verify(args.file, kernel=args.kernel, seed=args.seed, seeds=args.seeds, cu_text=cu_text,
                    cu_path=args.cu, options=Options(kernels=[args.kernel] if args.kernel else [],
                                                     import_module=import_mode_of(args)),
                    sizes=parse_sizes(args.sizes) if args.sizes else None, sim_max_threads=args.sim_max_threads,
                    progress=progress, device=device, also_cpu=args.also_cpu, dists=_dists(args.dists),
                    oneoff=oneoff)
    print(format_report(result))
    if args.json:
        write_atomically(Path(args.json), json.dumps(result.to_json(), indent=2) + "\n")
    if args.junit:
        write_atomically(Path(args.junit), junit_xml(result))
    return 0 if result.ok else 1
