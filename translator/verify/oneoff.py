"""`verify --args "a=float32[1000]:uniform, out=float32[1000]:out, n=1000" --grid --block` -> one launch to
check without example(): the parameters in the kernel's order, each array's dtype, shape and distribution."""

from __future__ import annotations

import re

from ..errors import UserError
from ..ir import typesys as T
from ..runtime.dropin import kernel_metadata
from ..runtime.launch_checks import Param, launch_config, scalar, table_limits
from .plan import DISTRIBUTIONS as DRAWS

ARRAY_RE = re.compile(r"^(?P<dtype>\w+)\[(?P<shape>[\d\s,]+)\](?P<tags>(?::\w+)*)$")
ONE_OFF_DISTS = tuple(DRAWS)  # every distribution the reference side can draw
ARGS_HELP = ("one launch without example(): every kernel parameter as NAME=VALUE, comma-separated. Arrays: "
             "DTYPE[SHAPE] with an optional :DIST (" + ", ".join(ONE_OFF_DISTS) + "; default normal, ints for "
             "integer dtypes); the arrays the kernel writes are compared (:out adds one, :inout marks one it "
             "updates in place, which keeps its drawn contents instead of a pre-fill), e.g. \"a=float32[1000], "
             "b=float32[1000]:uniform, out=float32[1000], n=1000\". Needs --grid and --block; the reference "
             "is the Numba original (no NumPy reference).")


def parse_value(name: str, text: str) -> dict:
    m = ARRAY_RE.match(text.replace(" ", ""))
    if m:
        try:
            dtype = T.parse_type(m["dtype"])
        except T.TypeStringError as exc:
            raise UserError(f"verify: error: --args {name}: {exc}") from None
        tags = [t for t in m["tags"].split(":") if t]
        dists = [t for t in tags if t not in ("out", "inout")]
        if any(d not in ONE_OFF_DISTS for d in dists) or len(dists) > 1:
            raise UserError(f"verify: error: --args {name}: unknown distribution {':'.join(dists)!r}\n"
                            f"    hint: one of {', '.join(ONE_OFF_DISTS)}, and :out or :inout for outputs")
        shape = [int(d) for d in m["shape"].split(",") if d.strip()]
        dist = dists[0] if dists else ("ints" if dtype.is_int else "zeros" if dtype.name == "bool" else "normal")
        return {"kind": "array", "dtype": dtype.name if dtype.name != "bool" else "bool", "shape": shape,
                "dist": dist, "out": "out" in tags, "inout": "inout" in tags}
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
    for p in fn.python_params:
        if isinstance(p.type, T.Tuple):
            raise UserError(f"verify: error: --args: {kernel}'s parameter {p.name!r} is a tuple ({p.type}), which "
                            "--args cannot spell\n    hint: verify it through the module's example()")
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
    _check_launch(oneoff, fn, out)
    written = [p.array is not None and p.array.written for p in fn.python_params]
    if not any(v.get("out") or v.get("inout") for v in out) and not any(written):
        raise UserError(f"verify: error: --args: {kernel} writes no array, so there is nothing to compare\n"
                        "    hint: mark the arrays to compare with :out, e.g. out=float32[1000]:out")
    return out


def _check_launch(oneoff: dict, fn, values: list) -> None:
    """The one launch checked as the drop-in and the CPU runtime check theirs (runtime/launch_checks.py), before
    the Numba original or the translation runs: launch fields within the limits, scalars of the right type and
    range and within the kernel's rules."""
    name, params, _, static_shared = kernel_metadata(fn)
    config = (tuple(oneoff["griddim"]), tuple(oneoff["blockdim"]), 0, oneoff["shared"])
    try:
        launch_config(name, config, table_limits(), static_shared)
        for spec, v in zip(params, values):
            if v["kind"] == "scalar":
                scalar(name, Param(*spec), v["value"])
    except (TypeError, ValueError, OverflowError) as exc:
        raise UserError(f"verify: error: --args/--grid/--block/--shared: {exc}") from None
