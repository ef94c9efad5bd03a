"""user module + plan -> reference outputs of the Numba original (GPU or CUDA simulator), run as a subprocess.

    python reference.py MODULE.py OUTDIR CONFIG_JSON

It imports and runs the user's module, so it runs in its own process (under NUMBA_ENABLE_CUDASIM=1 for
the simulator) and imports nothing from numba2cuda; in the simulator, sim_fidelity.py and sim_numba.py
(loaded from this folder by path) make the original compute what Numba computes on the GPU. It writes one
case<N>.npz per case (inputs, the example's expected outputs, the original's outputs under each of the
two pre-fills) and prints one JSON line describing them. Case plans and input draws: plan.py.
"""

import functools
import importlib.util
import inspect
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CASE = "n2c-case: "  # on stderr before a launch of the original, with its time limit in seconds, and after it
CONTEXT_LOST = 75  # exit status: the original broke this process's CUDA context; resume in a new process
STICKY_ERRORS = ("ILLEGAL_ADDRESS", "ILLEGAL_INSTRUCTION", "MISALIGNED_ADDRESS", "LAUNCH_FAILED",
                 "HARDWARE_STACK_ERROR", "INVALID_PC", "inconsistent state")


def sibling(name):
    """A module of this folder, loaded by path (this process must not import numba2cuda)."""
    spec = importlib.util.spec_from_file_location(f"n2c_verify_{name}", os.path.join(HERE, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


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


def prod(v):
    v = v if isinstance(v, (list, tuple)) else [v]
    out = 1
    for x in v:
        out *= int(x)
    return out


def simulator_shims():
    """numba-cuda 0.30.4's simulator cannot build a @vectorize(target="cuda") ufunc: its fake overloads have no
    signature and it lacks cuda.is_cuda_array. Two shims let it, so a ufunc module imports and runs there. And its
    cuda.jit refuses options numba-cuda's takes (lineinfo=, launch_bounds=, max_registers=, lto=) or takes until a
    launch (nopython= on a function kernels only call): they change no result, so they are dropped. Its
    devicearray module lacks the names of the real one's classes, which modules import for annotations."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") in ("", "0"):
        return
    from numba import cuda
    from numba.cuda import vectorizers

    real_jit = getattr(cuda.jit, "__wrapped__", cuda.jit)
    accepted = set(inspect.signature(real_jit).parameters)

    @functools.wraps(real_jit)
    def jit(*args, **options):
        return real_jit(*args, **{k: v for k, v in options.items() if k in accepted})

    cuda.jit = jit

    def compile_core(self, sig):
        return cuda.jit(sig, device=True)(self.pyfunc), sig.return_type

    vectorizers.CUDAVectorize._compile_core = compile_core
    if not hasattr(cuda, "is_cuda_array"):
        cuda.is_cuda_array = lambda obj: hasattr(obj, "__cuda_array_interface__")
    # `from numba.cuda.cudadrv.devicearray import DeviceNDArray` (for annotations): the simulator's module has
    # only its fake array class, so such a module did not import there
    from numba.cuda.simulator.cudadrv import devicearray

    for name in ("DeviceNDArray", "DeviceNDArrayBase", "DeviceRecord"):
        if not hasattr(devicearray, name):
            setattr(devicearray, name, devicearray.FakeCUDAArray)


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
    simulator_shims()
    spec = importlib.util.spec_from_file_location("n2c_userimport", os.path.join(HERE, os.pardir, "userimport.py"))
    userimport = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(userimport)
    return userimport.import_path(path, "n2c_verify_target")


def describe(ex, case, entry, facts, mod=None):
    """(meta, arrays) of one case: outputs are the arrays the kernel writes (from the IR) and those example()
    expects; arrays it also reads keep the example's contents (in-place updates), the others get pre-fills."""
    written = set(facts.get("written", ())) if facts else set()
    inout = set(facts.get("inout", ())) if facts else set()
    args = ex["args"]
    outputs = sorted({int(i) for i in ex["expected"]} | {i for i in written if i < len(args)
                                                         and isinstance(args[i], np.ndarray)})
    inout |= {i for i in outputs if args[i].dtype.names is not None}  # records (RNG states) advance in place
    meta = {"case": case, "seed": entry.seed, "size": entry.size, "params": entry.combo,
            "distribution": entry.dist, "specialised": entry.specialised, "kernel": kernel_name(ex["kernel"], mod),
            "example": entry.example, "griddim": ex["griddim"], "blockdim": ex["blockdim"],
            "shared": int(ex.get("shared", 0) or 0), "grid_sync": bool(facts and facts.get("grid_sync")),
            "nargs": len(args), "arrays": [], "scalars": {},
            "outputs": outputs, "inout": sorted((inout | {int(i) for i in ex.get("inout", ())}) & set(outputs)),
            "rtol": ex.get("rtol"), "atol": ex.get("atol"), "fills": {}, "original": None, "original_fills": 1,
            "expected_valid": entry.dist in ("example", "cli") and bool(ex["expected"])
            and all(e is not None for e in ex["expected"].values()), "redrawn": entry.redrawn}
    arrays = {}
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            meta["arrays"].append(i)
            arrays[f"arg{i}"] = a
        else:
            v = a.item() if isinstance(a, np.generic) else a
            meta["scalars"][str(i)] = {"complex": [v.real, v.imag]} if isinstance(v, complex) else v  # JSON has none
    for i in outputs:
        e = ex["expected"].get(i) if i in ex["expected"] else None
        if meta["expected_valid"] and e is not None:
            arrays[f"expected{i}"] = np.asarray(e)
        a = args[i]
        if a.dtype.kind in "iub":
            avoid = [a] + ([np.asarray(e)] if e is not None else [])
            meta["fills"][str(i)] = [v.item() if isinstance(v, np.generic) else v for v in sentinels(a.dtype, avoid)]
    return meta, arrays


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


FILL_FLOATS = (float("nan"), 1e30)


def filled(ex, meta, which):
    args = [a.copy(order="K") if isinstance(a, np.ndarray) else a for a in ex["args"]]
    for i in meta["outputs"]:
        if i not in meta["inout"]:
            a = args[i]
            a.fill(FILL_FLOATS[which] if a.dtype.kind in "fc" else meta["fills"][str(i)][which])
    return args


def launch_original(ex, meta, args, device, helpers, seconds):
    if helpers is not None:
        helpers.deadline = time.monotonic() + seconds
    try:
        launcher(ex["kernel"], (ex["griddim"], ex["blockdim"], 0, meta["shared"]))(*args)
        if device == "cuda":
            from numba import cuda
            cuda.synchronize()
    finally:
        if helpers is not None:
            helpers.deadline = None


def run_original(ex, meta, arrays, device, sim_max, helpers, seconds):
    """Launch the Numba original under the first pre-fill, and under the second when the first left fill
    values in an output (a partial output: the untouched elements must be untouched by the translation)."""
    threads = prod(ex["griddim"]) * prod(ex["blockdim"])
    if device == "simulator" and meta.get("grid_sync"):
        meta["original"] = ("skipped: the CUDA simulator runs one block after another, so a grid-wide barrier "
                            "(cuda.cg.this_grid().sync()) does not hold there; Numba's result is the GPU's")
        return
    if device == "simulator" and threads > sim_max:
        meta["original"] = (f"skipped: {threads} CUDA threads > {sim_max}, too slow in the simulator (one Python "
                            "thread per CUDA thread)")
        return
    try:
        first = filled(ex, meta, 0)
        launch_original(ex, meta, first, device, helpers, seconds)
        partial = any(has_fill(first[i], meta, i, 0) for i in meta["outputs"] if i not in meta["inout"])
        second = None
        if partial:
            second = filled(ex, meta, 1)
            launch_original(ex, meta, second, device, helpers, seconds)
    except Exception as exc:  # noqa: BLE001 - the original's failure is data about the case
        text = str(exc).splitlines()[0] if str(exc) else ""
        meta["original"] = f"{type(exc).__name__}: {text}"
        return
    for i in meta["outputs"]:
        arrays[f"orig0_{i}"] = first[i]
        if second is not None:
            arrays[f"orig1_{i}"] = second[i]
    meta["original_fills"] = 2 if second is not None else 1
    meta["original"] = "ok"


def has_fill(a, meta, i, which):
    if a.dtype.kind in "fc":
        return bool(np.isnan(a).any()) if which == 0 else bool((a == FILL_FLOATS[1]).any())
    return bool((a == meta["fills"][str(i)][which]).any())


class Journal:
    """What this run has done, line by line in OUTDIR/journal.jsonl, so that a run the parent ended (a launch of
    the original past its budget: a GPU kernel, or an @njit helper holding the GIL, cannot be stopped from
    inside) can be resumed after that case: the case it was in is dropped, and so is that kind of redrawn input
    for that kernel and example (the other seeds and sizes would not end either)."""

    def __init__(self, outdir, resume):
        self.path = os.path.join(outdir, "journal.jsonl")
        self.metas, self.dropped, self.notes, self.first_seconds, self.endless = [], [], [], {}, {}
        self.start = 0
        ended = self._replay() if resume else None
        self.file = open(self.path, "a")
        if ended is not None:
            self.write("endless", ended)  # for a later resume

    def _replay(self):
        """Read the journal back; the case the parent ended the run in (dropped here), if any."""
        with open(self.path) as f:
            text = f.read()
        whole = text[:text.rfind("\n") + 1]
        if whole != text:  # the last line, cut by the kill: gone, so that what is appended stays readable
            with open(self.path, "w") as f:
                f.write(whole)
        begun = None
        for line in whole.splitlines():
            event, value = json.loads(line)
            if event == "begin":
                begun = value
            elif event == "case":
                self.metas.append(value)
            elif event == "dropped":
                self.dropped.append(value)
            elif event == "notes":
                self.notes += value
            elif event == "first":
                self.first_seconds[(value[0], value[1])] = value[2]
            elif event == "end":
                begun, self.start = None, value + 1
            elif event == "endless":  # a case an earlier resume dropped
                begun, self.start = None, value["k"] + 1
                self._endless(value)
        if begun is not None:  # the parent ended the run in this case
            where = "on the GPU" if begun["device"] == "cuda" else "in the CUDA simulator"
            begun["reason"] = (f"{begun['what']}: the Numba original did not finish in {begun['limit']:.0f} s {where} "
                               "(a loop over the redrawn inputs may not end; dropped, with the same kind of inputs "
                               "for this kernel)")
            self._endless(begun)
            self.start = begun["k"] + 1
        return begun

    def _endless(self, case):
        self.dropped.append(case["reason"])
        self.endless[tuple(case["key"])] = case["what"]

    def write(self, event, value):
        line = json.dumps([event, value], default=lambda o: o.item() if isinstance(o, np.generic) else str(o))
        self.file.write(line + "\n")
        self.file.flush()


def main(path, outdir, cfg):
    plan = sibling("plan")
    mod = load(path)
    device = cfg["device"]
    helpers, notes = None, []
    if device == "simulator":
        ops = sibling("sim_numba")
        reductions = sibling("sim_reduce")
        ops.NUMPY = reductions.NumpyModule()  # np.sum(a) and the like, as numba-cuda adds
        ops.BUILTINS["sum"] = functools.partial(reductions.builtin_sum, add=lambda a, b: ops.binop(0, a, b))
        fidelity = sibling("sim_fidelity")
        helpers, notes = fidelity.install(mod, ops)
    sim_max = int(cfg["sim_max_threads"] if cfg["sim_max_threads"] is not None
                  else getattr(mod, "VERIFY_SIM_MAX_THREADS", 4096))
    try:
        entries, unswept = plan.make_plan(mod, cfg)
    except plan.PlanError as exc:
        return {"error": str(exc)}
    journal = Journal(outdir, cfg.get("resume"))
    metas, dropped, first_seconds = journal.metas, journal.dropped, journal.first_seconds
    notes += journal.notes
    for k, entry in enumerate(entries):
        if k < journal.start:
            continue
        print(f"n2c-progress: {k}/{len(entries)}", file=sys.stderr, flush=True)
        rng = np.random.default_rng(entry.seed)
        label = entry.label()
        try:
            ex = plan.call_example(mod, cfg, entry, rng)
        except plan.PlanError as exc:
            return {"error": str(exc)}
        if device == "simulator":
            new_notes = fidelity.rewrite_module_of(ex["kernel"], helpers, ops)
            notes += new_notes
            journal.write("notes", new_notes)
        facts = cfg.get("facts", {}).get(kernel_name(ex["kernel"], mod))
        if entry.dist not in ("example", "cli"):
            entry.redrawn = plan.redraw(ex, entry.dist, np.random.default_rng([entry.seed, 7]), facts,
                                        cfg.get("specs", {}).get(kernel_name(ex["kernel"], mod), {}))
            if not entry.redrawn:
                continue  # nothing of that kind to redraw
        plan.typed_scalars(ex, facts)
        meta, arrays = describe(ex, len(metas), entry, facts, mod)
        meta["as_written"] = bool(getattr(ex["kernel"], "_n2c_as_written", False))
        if cfg["kernel"] and meta["kernel"] != cfg["kernel"]:
            return {"error": f"--kernel {cfg['kernel']}: {entry.example}() runs {meta['kernel']!r}; name the "
                             f"kernel's own example as example_{cfg['kernel']}(rng, size)"}
        key = (meta["kernel"], entry.example)
        # a redraw may make a loop of the original run ~forever (a count near a dtype's limit): it gets a few
        # times what the example took, and is dropped past that
        budget = 3600.0 if entry.dist in ("example", "cli") else min(30.0, 5.0 + 10 * first_seconds.get(key, 1.0))
        what = "the --args launch" if entry.dist == "cli" else f"{label} with {entry.dist} inputs"
        if (*key, entry.dist) in journal.endless:
            dropped.append(f"{what}: not run (the original did not finish on {journal.endless[(*key, entry.dist)]})")
            journal.write("dropped", dropped[-1])
            journal.write("end", k)
            continue
        # the parent ends this process if the launch runs past the budget (and a margin in the simulator, whose
        # loops check the deadline themselves), then runs it again from the journal
        limit = budget if device == "cuda" else budget + 3.0
        journal.write("begin", {"k": k, "what": what, "key": [*key, entry.dist], "limit": limit, "device": device})
        print(f"{CASE}{limit}", file=sys.stderr, flush=True)
        t0 = time.monotonic()
        run_original(ex, meta, arrays, device, sim_max, helpers, budget)
        print(f"{CASE}done", file=sys.stderr, flush=True)
        if entry.dist in ("example", "cli") and key not in first_seconds:
            first_seconds[key] = time.monotonic() - t0
            journal.write("first", [*key, first_seconds[key]])
        if meta["original"] != "ok" and not meta["expected_valid"] and entry.dist != "example":
            dropped.append(f"{what}: {plan.why_dropped(meta['original'])}")
            journal.write("dropped", dropped[-1])
        else:
            np.savez(os.path.join(outdir, f"case{meta['case']}.npz"), **arrays)
            metas.append(meta)
            journal.write("case", meta)
        journal.write("end", k)
        if device == "cuda" and context_lost(meta["original"]) and not cfg.get("no_restart"):
            return None  # the next case needs a process with a fresh CUDA context: the parent resumes after k
    return {"cases": metas, "unswept": unswept, "dropped": dropped, "notes": sorted(set(notes))}


def context_lost(status: str) -> bool:
    """Whether the original's failure left this process's CUDA context unusable (an out-of-bounds access: every
    later launch here fails the same way, which would drop every later case as the original's failure)."""
    return any(word in status for word in STICKY_ERRORS)


if __name__ == "__main__":
    # run as a script, this folder (check.py, report.py, testing.py ...) would shadow the user's imports
    if sys.path and os.path.abspath(sys.path[0]) == HERE:
        sys.path.pop(0)
    result = main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))
    if result is None:
        os._exit(CONTEXT_LOST)
    print(json.dumps(result, default=lambda o: o.item() if isinstance(o, np.generic) else str(o)))
    sys.stdout.flush()
    os._exit(0)  # simulator threads of an original that timed out may still be running
