"""`numba2cuda verify` arguments -> verify() call, report, JSON/JUnit files and exit code."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from . import typesys as T
from .atomic import write_atomically
from .errors import UserError
from .lower import Options
from .verify_reference import DISTRIBUTIONS as DRAWS

ARRAY_RE = re.compile(r"^(?P<dtype>\w+)\[(?P<shape>[\d\s,]+)\](?P<tags>(?::\w+)*)$")
ONE_OFF_DISTS = tuple(DRAWS)  # every distribution the reference side can draw
ARGS_HELP = ("one launch without example(): every kernel parameter as NAME=VALUE, comma-separated. Arrays: "
             "DTYPE[SHAPE] with an optional :DIST (" + ", ".join(ONE_OFF_DISTS) + "; default normal, ints for "
             "integer dtypes) and :out for the arrays to compare, e.g. \"a=float32[1000], "
             "b=float32[1000]:uniform, out=float32[1000]:out, n=1000\". Needs --grid and --block; the "
             "reference is the Numba original (no NumPy reference).")


def parse_value(name: str, text: str) -> dict:
    m = ARRAY_RE.match(text.replace(" ", ""))
    if m:
        try:
            dtype = T.parse_type(m["dtype"])
        except T.TypeStringError as exc:
            raise UserError(f"verify: error: --args {name}: {exc}") from None
        tags = [t for t in m["tags"].split(":") if t]
        dists = [t for t in tags if t != "out"]
        if any(d not in ONE_OFF_DISTS for d in dists) or len(dists) > 1:
            raise UserError(f"verify: error: --args {name}: unknown distribution {':'.join(dists)!r}\n"
                            f"    hint: one of {', '.join(ONE_OFF_DISTS)}, and :out for outputs")
        shape = [int(d) for d in m["shape"].split(",") if d.strip()]
        dist = dists[0] if dists else ("ints" if dtype.is_int else "zeros" if dtype.name == "bool" else "normal")
        return {"kind": "array", "dtype": dtype.name if dtype.name != "bool" else "bool", "shape": shape,
                "dist": dist, "out": "out" in tags}
    for conv in (int, float):
        try:
            return {"kind": "scalar", "value": conv(text)}
        except ValueError:
            pass
    raise UserError(f"verify: error: --args {name}={text}: not an array (DTYPE[SHAPE][:DIST][:out]) or a number")


def parse_oneoff(args_text: str, grid: str, block: str, shared: int, rtol, atol) -> dict:
    if not grid or not block:
        raise UserError("verify: error: --args needs --grid and --block (e.g. --grid 4 --block 256)")
    values = {}
    for item in T.split_top_level(args_text):
        name, eq, text = item.partition("=")
        if not eq or not name.strip():
            raise UserError(f"verify: error: --args: {item!r} is not NAME=VALUE")
        values[name.strip()] = parse_value(name.strip(), text.strip())
    return {"values": values, "griddim": _dims(grid, "--grid"), "blockdim": _dims(block, "--block"),
            "shared": shared, "rtol": rtol, "atol": atol}


def _dims(text: str, flag: str) -> list[int]:
    try:
        dims = [int(v) for v in text.replace("(", "").replace(")", "").split(",") if v.strip()]
    except ValueError:
        raise UserError(f"verify: error: {flag} {text}: give 1 to 3 integers, e.g. 4 or 8,8") from None
    if not 1 <= len(dims) <= 3 or min(dims) < 1:
        raise UserError(f"verify: error: {flag} {text}: give 1 to 3 positive integers, e.g. 4 or 8,8")
    return dims


def order_oneoff_args(oneoff: dict, kernels: dict, kernel: str | None) -> list:
    """The parsed --args in the kernel's parameter order; every parameter named once, of the right kind."""
    if kernel is None:
        if len(kernels) != 1:
            raise UserError(f"verify: error: --args: the module has several kernels ({', '.join(kernels)}); "
                            "name one with --kernel")
        kernel = next(iter(kernels))
    oneoff["kernel"] = kernel
    fn = kernels[kernel]
    values, out = dict(oneoff["values"]), []
    for p in fn.params:
        if p.name not in values:
            raise UserError(f"verify: error: --args: no value for {kernel}'s parameter {p.name!r} ({p.type})")
        v = values.pop(p.name)
        if (v["kind"] == "array") != isinstance(p.type, T.Array):
            raise UserError(f"verify: error: --args {p.name}: the kernel takes {p.type}")
        if v["kind"] == "array" and (v["dtype"] != p.type.dtype.name or len(v["shape"]) != p.type.ndim):
            raise UserError(f"verify: error: --args {p.name}: the kernel takes {p.type}, got "
                            f"{v['dtype']}[{', '.join(map(str, v['shape']))}]")
        out.append(v)
    if values:
        raise UserError(f"verify: error: --args: {kernel} has no parameter {', '.join(map(repr, values))}")
    if not any(v.get("out") for v in out):
        raise UserError("verify: error: --args: mark the arrays to compare with :out, e.g. out=float32[1000]:out")
    return out


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
    from .verify import DISTRIBUTIONS

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
    from .verify import NOTICE, format_report, junit_xml, parse_sizes, resolve_device, verify

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
                    cu_path=args.cu, options=Options(kernels=[args.kernel]) if args.kernel else None,
                    sizes=parse_sizes(args.sizes) if args.sizes else None, sim_max_threads=args.sim_max_threads,
                    progress=progress, device=device, also_cpu=args.also_cpu, dists=_dists(args.dists),
                    oneoff=oneoff)
    print(format_report(result))
    if args.json:
        write_atomically(Path(args.json), json.dumps(result.to_json(), indent=2) + "\n")
    if args.junit:
        write_atomically(Path(args.junit), junit_xml(result))
    return 0 if result.ok else 1
