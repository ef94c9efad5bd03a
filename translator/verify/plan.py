"""module + verify options -> the cases to run (example function x seed x size x specialisation x inputs),
and the redrawn inputs that exercise what example() alone may not.

Runs in reference.py's process (loaded by path: it imports nothing from numba2cuda); oneoff.py imports
DISTRIBUTIONS from here. A module describes each kernel's launch with `example(rng, size)` (one kernel) or
`example_<kernel>(rng, size)` (one per kernel, the name saying which).

Redraws, run for the first seed, size and specialisation beside example()'s own inputs (the original is
then the only reference; a redraw on which the original fails, raises or does not finish is dropped with a
note, since the translation cannot be judged where the original is undefined):
  uniform, large, tiny, negative   float arrays: U(0,1), N(0,1)*1e18, N(0,1)*1e-18, -|N(0,1)|*100
  specials                         float arrays: signed zeros, subnormals, +-1, huge and tiny magnitudes,
                                   mixed into normal values
  above, below                     float arrays entirely far from zero: U(64,128), U(-128,-64) (a wrong
                                   identity of a max or min reduction shows)
  nonfinite                        float arrays with NaN and +-Inf sprinkled in (positions must match)
  ints                             integer arrays: negatives, zero, +-1, +-2 and small values beside the
                                   example's own (//, %, shifts, abs, casts)
  limits                           integer arrays: values near the dtype's limits (overflow, wraparound)
  ascending, descending            every numeric input array holding its own values sorted (row-major): the
                                   extreme of a reduction at its last or first element (a skipped end shows)
  scalars                          scalar arguments redrawn near the example's values (a translation that
                                   hard-codes the only value example() passes shows); specialised ones kept
"""

import inspect

import numpy as np

# --args draws (oneoff.py)
DISTRIBUTIONS = {
    "normal": lambda rng, shape: rng.standard_normal(shape),
    "uniform": lambda rng, shape: rng.uniform(0.0, 1.0, shape),
    "large": lambda rng, shape: rng.standard_normal(shape) * 1e18,
    "tiny": lambda rng, shape: rng.standard_normal(shape) * 1e-18,
    "negative": lambda rng, shape: -np.abs(rng.standard_normal(shape)) * 100.0,
    "ints": lambda rng, shape: rng.integers(-100, 101, shape),
    "zeros": lambda rng, shape: np.zeros(shape),
}
FLOAT_REDRAWS = ("uniform", "large", "tiny", "negative", "specials", "above", "below", "nonfinite")
INT_REDRAWS = ("ints", "limits")
ORDER_REDRAWS = ("ascending", "descending")
REDRAWS = FLOAT_REDRAWS + INT_REDRAWS + ORDER_REDRAWS + ("scalars",)


class PlanError(Exception):
    """The module cannot be verified as written (no example, a wrong one): exit 2 with this message."""


class Entry:
    __slots__ = ("example", "seed", "size", "combo", "dist", "specialised", "redrawn")

    def __init__(self, example, seed, size, combo, dist, specialised):
        self.example, self.seed, self.size, self.combo, self.dist = example, seed, size, combo, dist
        self.specialised, self.redrawn = specialised, []

    def label(self):
        return f"{self.example}(rng, size={self.size!r}{''.join(f', {k}={v}' for k, v in self.combo.items())})"


def accepts(fn, name):
    try:
        ps = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in ps or any(p.kind is p.VAR_KEYWORD for p in ps.values())


def generic_value(mod, name, values):
    """A value of a specialised parameter that no template handles: the generic kernel runs it."""
    given = getattr(mod, "VERIFY_GENERIC", {}).get(name)
    if given is not None:
        return int(given)
    v = min(values) - 1
    while v in values and v > 0:
        v -= 1
    return v if v > 0 else max(values) + 1


def examples(mod, cfg):
    """[(function name, kernel it runs or None)]: example_<kernel> per kernel, else example()."""
    kernels = list(cfg.get("facts", {}))
    named = [(n, n[len("example_"):]) for n in dir(mod) if n.startswith("example_") and callable(getattr(mod, n))]
    if cfg["kernel"]:  # the others' kernels were not translated this time
        named = [(n, k) for n, k in named if k == cfg["kernel"]]
    unknown = [n for n, k in named if kernels and k not in kernels]
    if unknown:
        raise PlanError(f"{', '.join(unknown)}: no translated kernel has that name (kernels: {', '.join(kernels)}); "
                        "name each example after its kernel, example_<kernel>(rng, size)")
    if cfg["kernel"]:
        chosen = [(n, k) for n, k in named if k == cfg["kernel"]]
        if chosen:
            return chosen
    elif named:
        return named + ([("example", None)] if callable(getattr(mod, "example", None)) else [])
    if not callable(getattr(mod, "example", None)):
        raise PlanError("no example() in the module: verify needs example(rng, size) returning dict(kernel=..., "
                        "griddim=..., blockdim=..., shared=..., args=[...], expected={i: array}), or one "
                        "example_<kernel>(rng, size) per kernel; or describe one launch with --grid/--block/--args")
    return [("example", None)]


def make_plan(mod, cfg):
    """([Entry], unswept specialisation parameters)."""
    if cfg.get("oneoff"):
        return [Entry("cli", seed, "cli", {}, "cli", {}) for seed in cfg["seeds"]], []
    plan, unswept = [], set()
    for name, kernel in examples(mod, cfg):
        fn = getattr(mod, name)
        kernel = kernel or cfg["kernel"] or (next(iter(cfg.get("facts", {})), None) if len(cfg.get("facts", {})) == 1
                                             else None)
        specs = cfg["specs"].get(kernel, {}) if kernel else {}
        sweep = {p: sorted(set(v)) for p, v in specs.items() if accepts(fn, p)}
        unswept |= {p for p in specs if p not in sweep}
        combos = [{}]
        for p, values in sweep.items():
            combos = [dict(c, **{p: v}) for c in combos for v in values + [generic_value(mod, p, values)]]
        base = cfg["sizes"] or list(getattr(mod, f"VERIFY_SIZES_{kernel}", None) or getattr(mod, "VERIFY_SIZES", ("small",)))
        if any(not isinstance(z, str) for z in base) and not (hasattr(mod, "VERIFY_SIZES")
                                                               or hasattr(mod, f"VERIFY_SIZES_{kernel}")):
            raise PlanError("integer sizes need a module whose example(rng, size) takes them: declare "
                            "VERIFY_SIZES = (...) in the module to say it does")
        for n_combo, combo in enumerate(combos):
            sizes = list(base)
            if not cfg["sizes"]:
                for v in combo.values():
                    sizes += [v - 1, v + 1] if v > 1 else [v + 1]
            seen = list(dict.fromkeys(sizes))
            spec = {p: v in sweep.get(p, ()) for p, v in combo.items()}
            for size in seen:
                for seed in cfg["seeds"]:
                    plan.append(Entry(name, seed, size, combo, "example", spec))
                    if seed == cfg["seeds"][0] and size == seen[0] and n_combo == 0:
                        plan += [Entry(name, seed, size, combo, d, spec) for d in cfg["dists"]]
    return plan, sorted(unswept)


def call_example(mod, cfg, entry, rng):
    if entry.dist == "cli":
        return oneoff_example(mod, cfg["oneoff"], rng)
    try:
        ex = getattr(mod, entry.example)(rng, size=entry.size, **entry.combo)
    except Exception as exc:  # noqa: BLE001 - the user's function: its failure is a usage error
        raise PlanError(f"{entry.label()} failed: {type(exc).__name__}: {exc}") from None
    for key in ("kernel", "griddim", "blockdim", "args", "expected"):
        if not isinstance(ex, dict) or key not in ex:
            raise PlanError(f"{entry.label()} returns no {key!r}")
    ex["expected"] = {int(i): e for i, e in ex["expected"].items()}
    return ex


def oneoff_example(mod, spec, rng):
    """The example() of a one-off run from the command line: inputs drawn as the flags say, no expected."""
    args, outputs, inout = [], [], []
    for i, a in enumerate(spec["args"]):
        if a["kind"] == "scalar":
            args.append(a["value"])
            continue
        dtype = np.dtype(a["dtype"])
        values = DISTRIBUTIONS[a["dist"]](rng, tuple(a["shape"]))
        if dtype.kind in "iu":
            values = np.clip(np.rint(values), np.iinfo(dtype).min, np.iinfo(dtype).max)
        args.append(np.require(values.astype(dtype), requirements="C"))
        if a["out"] or a.get("inout"):
            outputs.append(i)
        if a.get("inout"):
            inout.append(i)
    return dict(kernel=getattr(mod, spec["kernel"]), griddim=spec["griddim"], blockdim=spec["blockdim"],
                shared=spec["shared"], args=args, expected={i: None for i in outputs}, inout=set(inout),
                rtol=spec.get("rtol"), atol=spec.get("atol"))


# ---------------------------------------------------------------- redraws

def _float_specials(rng, shape, dtype):
    info = np.finfo(dtype)
    pool = np.array([0.0, -0.0, 1.0, -1.0, float(info.tiny) / 4, -float(info.tiny) / 4, float(info.tiny),
                     float(info.max) / 1e4, -float(info.max) / 1e4, float(info.eps), 1e-30, -1e-30], dtype=dtype)
    out = rng.standard_normal(shape).astype(dtype)
    pick = rng.random(shape) < 0.4
    out[pick] = rng.choice(pool, size=int(pick.sum()))
    return out


def _nonfinite(rng, shape, dtype):
    out = rng.standard_normal(shape).astype(dtype)
    r = rng.random(shape)
    out[r < 0.05] = np.nan
    out[(r >= 0.05) & (r < 0.08)] = np.inf
    out[(r >= 0.08) & (r < 0.11)] = -np.inf
    return out


FLOAT_DRAWS = {
    "uniform": lambda rng, shape, dt: rng.uniform(0.0, 1.0, shape),
    "large": lambda rng, shape, dt: rng.standard_normal(shape) * 1e18,
    "tiny": lambda rng, shape, dt: rng.standard_normal(shape) * 1e-18,
    "negative": lambda rng, shape, dt: -np.abs(rng.standard_normal(shape)) * 100.0,
    "specials": _float_specials,
    "above": lambda rng, shape, dt: rng.uniform(64.0, 128.0, shape),
    "below": lambda rng, shape, dt: rng.uniform(-128.0, -64.0, shape),
    "nonfinite": _nonfinite,
}


def _int_draw(rng, a, limits):
    info = np.iinfo(a.dtype)
    flat = a.reshape(-1).copy()
    n = flat.size
    r = rng.random(n)
    if limits:
        pool = [info.min, info.min + 1, info.max, info.max - 1, info.max // 2, info.min // 2, 0, 1]
        pick = r < 0.5
    else:
        pool = [0, 1, -1, 2, -2, 3, -3, 7, -7, 16, -16]
        pick = r < 0.6
    pool = np.array([v for v in pool if info.min <= v <= info.max], dtype=a.dtype)
    flat[pick] = rng.choice(pool, size=int(pick.sum()))
    if not limits:
        small = (r >= 0.6) & (r < 0.8)
        lo = max(info.min, -100)
        flat[small] = rng.integers(lo, min(info.max, 100) + 1, size=int(small.sum())).astype(a.dtype)
    return flat.reshape(a.shape)


def _scalar(rng, v):
    if isinstance(v, (bool, np.bool_)):
        return not v
    if isinstance(v, (int, np.integer)):
        v = int(v)
        if v > 1:
            return int(rng.integers(max(1, v // 2), v))
        if v < -1:
            return int(rng.integers(v, v // 2 + 1))
        return {0: 1, 1: 2, -1: -2}[v]
    if isinstance(v, (float, np.floating)) and v != 0 and np.isfinite(v):
        return type(v)(v * rng.uniform(0.5, 1.5))
    return None


def redraw(ex, dist, rng, facts, specs):
    """Replace the example's inputs of the kind DIST redraws; the names of the arguments changed."""
    written = set(int(i) for i in ex["expected"]) | set(facts.get("written", ()) if facts else ())
    inout = set(facts.get("inout", ()) if facts else ()) | set(int(i) for i in ex.get("inout", ()))
    params = facts.get("params", []) if facts else []
    name = lambda i: params[i] if i < len(params) else f"arg {i}"  # noqa: E731
    changed = []
    for i, a in enumerate(ex["args"]):
        is_input = i not in written or i in inout
        if dist == "scalars":
            if isinstance(a, (bool, int, float, np.generic)) and name(i) not in specs:
                new = _scalar(rng, a)
                if new is not None and new != a:
                    ex["args"][i] = type(a)(new) if isinstance(a, np.generic) else new
                    changed.append(name(i))
            continue
        if not isinstance(a, np.ndarray) or not is_input or a.size == 0:
            continue
        if dist in ORDER_REDRAWS and a.dtype.kind in "fiu" and a.size > 1:
            flat = np.sort(a.reshape(-1), kind="stable")
            ex["args"][i] = np.require((flat if dist == "ascending" else flat[::-1]).reshape(a.shape),
                                       requirements=_order(a))
            changed.append(name(i))
        elif dist in FLOAT_DRAWS and a.dtype.kind == "f":
            ex["args"][i] = np.require(FLOAT_DRAWS[dist](rng, a.shape, a.dtype).astype(a.dtype),
                                       requirements=_order(a))
            changed.append(name(i))
        elif dist in INT_REDRAWS and a.dtype.kind in "iu":
            ex["args"][i] = np.require(_int_draw(rng, a, dist == "limits"), requirements=_order(a))
            changed.append(name(i))
    return changed


def _order(a: np.ndarray) -> str:
    """The memory order an example's array has, which a redrawn one keeps (a kernel may take it column-major).
    runtime.launch_checks.memory_order's test, repeated: verify's reference process loads this file by path,
    where a relative import has no package."""
    return "F" if a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous else "C"


def typed_scalars(ex, facts) -> None:
    """Scalar arguments as the kernel's signature types them: Numba converts each at the launch (0.2 passed for
    a float32 parameter is float32(0.2) in the kernel), and so does the translation's launcher."""
    for i, name in (facts or {}).get("scalar_types", {}).items():
        i = int(i)
        if i < len(ex["args"]) and not isinstance(ex["args"][i], np.ndarray):
            try:
                ex["args"][i] = np.dtype("bool" if name == "bool" else name).type(ex["args"][i])
            except (TypeError, ValueError, OverflowError):
                pass  # left as given: the launch checks say what is wrong with it


def why_dropped(status: str) -> str:
    if status.startswith("OriginalTimeout"):
        return "the original did not finish in time on them (dropped: no reference)"
    if status.startswith("skipped:"):
        return f"no reference (the original was {status})"
    return f"the original fails on them ({status}): undefined there, so they cannot judge the translation"
