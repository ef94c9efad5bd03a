"""user module + plan -> reference outputs of the Numba original (GPU or CUDA simulator), run as a subprocess.

    python reference.py MODULE.py OUTDIR CONFIG_JSON

It imports and runs the user's module, so it runs in its own process (under NUMBA_ENABLE_CUDASIM=1
for the simulator) and imports nothing from numba2cuda. It writes one case<N>.npz per case (inputs,
the example's expected outputs, the original's outputs) and prints one JSON line describing them.
"""

import importlib.util
import inspect
import json
import os
import sys

import numpy as np

# Redraws of the example's floating-point inputs; the original is then the only reference.
DISTRIBUTIONS = {
    "normal": lambda rng, shape: rng.standard_normal(shape),
    "uniform": lambda rng, shape: rng.uniform(0.0, 1.0, shape),
    "large": lambda rng, shape: rng.standard_normal(shape) * 1e18,
    "tiny": lambda rng, shape: rng.standard_normal(shape) * 1e-18,
    "negative": lambda rng, shape: -np.abs(rng.standard_normal(shape)) * 100.0,
    "ints": lambda rng, shape: rng.integers(-100, 101, shape),
    "zeros": lambda rng, shape: np.zeros(shape),
}


def sentinels(dtype, avoid):
    """Two integer fill values that appear in no expected output or input (booleans: True and False)."""
    if dtype.kind not in "iu":
        return [True, False]
    info = np.iinfo(dtype)
    out = []
    for k in range(1000):
        for cand in (info.max - k, info.min + k):
            if not any(np.any(a == cand) for a in avoid) and cand not in out:
                out.append(cand)
                if len(out) == 2:
                    return out
    raise RuntimeError("no sentinel value found")


def kernel_name(k, mod=None):
    """The name the module binds the kernel to (a factory's kernel is named by the binding, as numba2cuda names
    it), else the function's own name."""
    for name, value in vars(mod).items() if mod is not None else ():
        if value is k and not name.startswith("_"):
            return name
    for get in (lambda: k.__name__, lambda: k.fn.__name__, lambda: k.py_func.__name__):
        try:
            return get()
        except AttributeError:
            pass
    return repr(k)


def accepts(fn, name):
    try:
        ps = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in ps or any(p.kind is p.VAR_KEYWORD for p in ps.values())


def prod(v):
    v = v if isinstance(v, (list, tuple)) else [v]
    out = 1
    for x in v:
        out *= int(x)
    return out


def simulator_ufunc_shims():
    """numba-cuda 0.30.4's simulator cannot build a @vectorize(target="cuda") ufunc: its fake overloads have no
    signature and it lacks cuda.is_cuda_array. Two shims let it, so a ufunc module imports and runs there."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") in ("", "0"):
        return
    from numba import cuda
    from numba.cuda import vectorizers

    def compile_core(self, sig):
        return cuda.jit(sig, device=True)(self.pyfunc), sig.return_type

    vectorizers.CUDAVectorize._compile_core = compile_core
    if not hasattr(cuda, "is_cuda_array"):
        cuda.is_cuda_array = lambda obj: hasattr(obj, "__cuda_array_interface__")


def launcher(kernel, config):
    """kernel[config]; a Numba CUDA ufunc has no launch configuration: it is called with its outputs (vectorize's
    one as out=), on the configuration's stream, as numba2cuda's translated ufunc launches too."""
    if hasattr(type(kernel), "__getitem__"):
        return kernel[config]
    stream = config[2] if len(config) > 2 else 0
    if type(kernel).__name__ == "CUDAUFuncDispatcher":
        return lambda *args: kernel(*args[:-1], out=args[-1], stream=stream)
    return lambda *args: kernel(*args, stream=stream)


def load(path):
    simulator_ufunc_shims()
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec = importlib.util.spec_from_file_location("n2c_verify_target", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def generic_value(mod, name, values):
    """A value of a specialised parameter that no template handles: the generic kernel runs it."""
    given = getattr(mod, "VERIFY_GENERIC", {}).get(name)
    if given is not None:
        return int(given)
    v = min(values) - 1
    while v in values and v > 0:
        v -= 1
    return v if v > 0 else max(values) + 1


def make_plan(mod, cfg):
    """[(seed, size, params, distribution)]: every specialisation value plus a generic one; the module's
    VERIFY_SIZES (or --sizes) plus tile-1 and tile+1 per value; every seed; the example's own inputs, and
    for the first seed and size the redrawn distributions."""
    sweep = {p: sorted(set(v)) for p, v in cfg["specs"].items() if accepts(mod.example, p)}
    combos = [{}]
    for p, values in sweep.items():
        combos = [dict(c, **{p: v}) for c in combos for v in values + [generic_value(mod, p, values)]]
    base_sizes = cfg["sizes"] or list(getattr(mod, "VERIFY_SIZES", ("small",)))
    plan = []
    for combo in combos:
        sizes = list(base_sizes)
        if not cfg["sizes"]:
            for v in combo.values():
                sizes += [v - 1, v + 1] if v > 1 else [v + 1]
        seen = list(dict.fromkeys(sizes))  # in order, each once
        for size in seen:
            for seed in cfg["seeds"]:
                plan.append((seed, size, combo, "example"))
                if seed == cfg["seeds"][0] and size == seen[0]:
                    plan += [(seed, size, combo, d) for d in cfg["dists"]]
    return sweep, base_sizes, plan


def oneoff_example(mod, spec, rng):
    """The example() of a one-off run from the command line: inputs drawn as the flags say, no expected."""
    args, outputs = [], []
    for i, a in enumerate(spec["args"]):
        if a["kind"] == "scalar":
            args.append(a["value"])
            continue
        dtype = np.dtype(a["dtype"])
        values = DISTRIBUTIONS[a["dist"]](rng, tuple(a["shape"]))
        if dtype.kind in "iu":
            values = np.clip(np.rint(values), np.iinfo(dtype).min, np.iinfo(dtype).max)
        args.append(np.ascontiguousarray(values.astype(dtype)))
        if a["out"]:
            outputs.append(i)
    return dict(kernel=getattr(mod, spec["kernel"]), griddim=spec["griddim"], blockdim=spec["blockdim"],
                shared=spec["shared"], args=args, expected={i: None for i in outputs},
                rtol=spec.get("rtol"), atol=spec.get("atol"))


def redraw(ex, dist, rng):
    """Replace the example's read-only floating-point inputs by draws from `dist`."""
    changed = False
    written = set(int(i) for i in ex["expected"]) | set(int(i) for i in ex.get("inout", ()))
    for i, a in enumerate(ex["args"]):
        if isinstance(a, np.ndarray) and a.dtype.kind == "f" and i not in written:
            ex["args"][i] = np.ascontiguousarray(DISTRIBUTIONS[dist](rng, a.shape).astype(a.dtype))
            changed = True
    return changed


def describe(ex, case, seed, size, combo, dist, sweep, mod=None):
    meta = {"case": case, "seed": seed, "size": size, "params": combo, "distribution": dist,
            "specialised": {p: v in sweep.get(p, ()) for p, v in combo.items()}, "kernel": kernel_name(ex["kernel"], mod),
            "griddim": ex["griddim"], "blockdim": ex["blockdim"], "shared": int(ex.get("shared", 0) or 0),
            "nargs": len(ex["args"]), "arrays": [], "scalars": {},
            "outputs": sorted(int(i) for i in ex["expected"]), "inout": sorted(int(i) for i in ex.get("inout", ())),
            "rtol": ex.get("rtol"), "atol": ex.get("atol"), "fills": {}, "original": None,
            "expected_valid": dist == "example" and all(e is not None for e in ex["expected"].values())}
    arrays = {}
    for i, a in enumerate(ex["args"]):
        if isinstance(a, np.ndarray):
            meta["arrays"].append(i)
            arrays[f"arg{i}"] = a
        else:
            meta["scalars"][str(i)] = a.item() if isinstance(a, np.generic) else a
    for i, e in ex["expected"].items():
        i = int(i)
        if ex["args"][i].dtype.names is not None and i not in meta["inout"]:
            meta["inout"].append(i)  # records (RNG states) are advanced in place: their contents are an input
        if meta["expected_valid"]:
            arrays[f"expected{i}"] = np.asarray(e)
        a = ex["args"][i]
        if a.dtype.kind in "iub":
            avoid = [a] + ([np.asarray(e)] if e is not None else [])
            meta["fills"][str(i)] = [v.item() if isinstance(v, np.generic) else v for v in sentinels(a.dtype, avoid)]
    return meta, arrays


def run_original(ex, meta, arrays, device, sim_max):
    """Launch the Numba original with outputs pre-filled as the translation's first run sees them."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in ex["args"]]
    for i in meta["outputs"]:
        if i not in meta["inout"]:
            args[i].fill(np.nan if args[i].dtype.kind in "fc" else meta["fills"][str(i)][0])
    threads = prod(ex["griddim"]) * prod(ex["blockdim"])
    if device == "simulator" and threads > sim_max:
        meta["original"] = (f"skipped: {threads} CUDA threads > {sim_max}, too slow in the simulator (one Python "
                            "thread per CUDA thread)")
        return
    try:
        launcher(ex["kernel"], (ex["griddim"], ex["blockdim"], 0, meta["shared"]))(*args)
        if device == "cuda":
            from numba import cuda
            cuda.synchronize()
    except Exception as exc:
        meta["original"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        return
    for i in meta["outputs"]:
        arrays[f"orig{i}"] = args[i]
    meta["original"] = "ok"


def main(path, outdir, cfg):
    mod = load(path)
    device = cfg["device"]
    sim_max = int(cfg["sim_max_threads"] or getattr(mod, "VERIFY_SIM_MAX_THREADS", 4096))
    if cfg.get("oneoff"):
        sweep, plan = {}, [(seed, "cli", {}, "cli") for seed in cfg["seeds"]]
    else:
        if not hasattr(mod, "example"):
            return {"error": "no example() in the module: verify needs example(rng, size) returning dict(kernel=..., "
                             "griddim=..., blockdim=..., shared=..., args=[...], expected={i: array}); or describe "
                             "one launch with --grid/--block/--args"}
        sweep, base_sizes, plan = make_plan(mod, cfg)
        if any(not isinstance(z, str) for z in base_sizes) and not hasattr(mod, "VERIFY_SIZES"):
            return {"error": "integer sizes need a module whose example(rng, size) takes them: declare "
                             "VERIFY_SIZES = (...) in the module to say it does"}
    metas, dropped = [], []
    for seed, size, combo, dist in plan:
        rng = np.random.default_rng(seed)
        label = f"example(rng, size={size!r}{''.join(f', {k}={v}' for k, v in combo.items())})"
        try:
            ex = oneoff_example(mod, cfg["oneoff"], rng) if dist == "cli" else mod.example(rng, size=size, **combo)
        except Exception as exc:
            return {"error": f"{label} failed: {type(exc).__name__}: {exc}"}
        for key in ("kernel", "griddim", "blockdim", "args", "expected"):
            if key not in ex:
                return {"error": f"{label} returns no {key!r}"}
        if dist not in ("example", "cli") and not redraw(ex, dist, np.random.default_rng([seed, 7])):
            continue  # no floating-point inputs to redraw
        meta, arrays = describe(ex, len(metas), seed, size, combo, dist, sweep, mod)
        if not cfg["kernel"] or meta["kernel"] == cfg["kernel"]:
            run_original(ex, meta, arrays, device, sim_max)
            if meta["original"] != "ok" and not meta["expected_valid"]:
                dropped.append(f"{label} with {dist} inputs: no reference (the original: {meta['original']})")
                continue
        np.savez(os.path.join(outdir, f"case{meta['case']}.npz"), **arrays)
        metas.append(meta)
    return {"cases": metas, "unswept": [p for p in cfg["specs"] if p not in sweep], "dropped": dropped}


if __name__ == "__main__":
    # run as a script, this folder (check.py, report.py, testing.py ...) would shadow the user's imports
    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        sys.path.pop(0)
    result = main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))
    print(json.dumps(result))
