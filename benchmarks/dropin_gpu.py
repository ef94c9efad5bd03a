"""GPU measurements for the drop-in translation (run on the H200; writes JSON and prints a summary).

    python3 benchmarks/dropin_gpu.py --out results.json

1. Lecture matmul 5120x256 @ 256x5120 fp32, side by side in one run, interleaved: the Numba original
   (dynamic shared memory, runtime tw=16, exactly as the lecture writes it), the translation at
   TW=16 and TW=32, the translation's generic kernel at tw=16, the hand-written template CUDA C,
   cuBLAS fp32 and TF32. CUDA events on the launch stream, the GPU kept busy while the host
   enqueues (so host cost is not counted), L2 flushed before every timed run; median and spread.
2. Bit-identity of every translation variant and the hand-written kernel against Numba's output.
3. Host overhead per launch of a tiny kernel: drop-in with torch tensors, Numba with torch tensors,
   Numba with its own device arrays, a plain load_inline function, torch.add.
4. Cold build of the matmul module (3 specialisations) in a fresh cache, and warm load, each in a
   new process.
5. Every corpus kernel through the drop-in with the launch code its example() uses for Numba,
   compared with Numba's own output.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def timed_runs(variants: dict, reps: int, flush):
    import torch

    times = {name: [] for name in variants}
    for _ in range(3):  # warm-up
        for fn in variants.values():
            fn()
    torch.cuda.synchronize()
    for _ in range(reps):
        for name, fn in variants.items():
            flush()
            torch.cuda._sleep(2_000_000)  # keep the GPU busy while the host enqueues: device time only
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times[name].append(start.elapsed_time(end) * 1000.0)
    return {name: summary(ts) for name, ts in times.items()}


def summary(ts):
    ts = sorted(ts)
    q = statistics.quantiles(ts, n=4) if len(ts) >= 4 else [ts[0], ts[len(ts) // 2], ts[-1]]
    return {"median_us": statistics.median(ts), "q1_us": q[0], "q3_us": q[2], "min_us": ts[0], "max_us": ts[-1],
            "n": len(ts)}


def matmul_section(results, reps):
    import torch
    from numba import cuda

    import handwritten_matmul
    import numba2cuda
    from corpus_harness import load_module

    torch.backends.cuda.matmul.allow_tf32 = False
    lecture = load_module(str(ROOT / "kernels" / "matmul.py"))
    numba_k = lecture.matmul_k_numba
    # exactly as the lecture writes it: no signature, so Numba compiles at the first launch and types the
    # Python int tw as int64; the translation is told the same type
    numba_lazy = cuda.jit(numba_k.py_func)
    dropin = numba2cuda.load(ROOT / "kernels" / "matmul.py")
    dropin64 = numba2cuda.load(ROOT / "kernels" / "matmul.py", types="tw=int64")
    generic = numba2cuda.load(ROOT / "kernels" / "matmul.py", specialize={"*": ()})
    hand = handwritten_matmul.load()

    h, k, w = 5120, 256, 5120
    gen = torch.Generator(device="cuda").manual_seed(0)
    m = torch.randn(h, k, device="cuda", generator=gen)
    n = torch.randn(k, w, device="cuda", generator=gen)
    outs = {name: torch.full((h, w), float("nan"), device="cuda") for name in
            ("numba_tw16", "translation_tw16", "translation_tw32", "translation_generic_tw16",
             "handwritten_tw16", "handwritten_tw32", "numba_lazy_tw16", "translation_int64_tw16",
             "translation_int64_tw32")}
    m_nb, n_nb = cuda.as_cuda_array(m), cuda.as_cuda_array(n)
    out_nb = cuda.as_cuda_array(outs["numba_tw16"])

    def cfg(tw):
        return ((w + tw - 1) // tw, (h + tw - 1) // tw), (tw, tw), 0, 2 * tw * tw * 4

    def numba16():
        numba_k[cfg(16)](m_nb, n_nb, out_nb, 16)

    out_lazy = cuda.as_cuda_array(outs["numba_lazy_tw16"])

    def numba_lazy16():
        numba_lazy[cfg(16)](m_nb, n_nb, out_lazy, 16)

    def t64_16():
        dropin64.matmul_k_numba[cfg(16)](m, n, outs["translation_int64_tw16"], 16)

    def t64_32():
        dropin64.matmul_k_numba[cfg(32)](m, n, outs["translation_int64_tw32"], 32)

    def t16():
        dropin.matmul_k_numba[cfg(16)](m, n, outs["translation_tw16"], 16)

    def t32():
        dropin.matmul_k_numba[cfg(32)](m, n, outs["translation_tw32"], 32)

    def g16():
        generic.matmul_k_numba[cfg(16)](m, n, outs["translation_generic_tw16"], 16)

    def hand16():
        outs["handwritten_tw16"] = hand.matmul_handwritten(m, n, 16)

    def hand32():
        outs["handwritten_tw32"] = hand.matmul_handwritten(m, n, 32)

    def cublas():
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.matmul(m, n)

    def tf32():
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.matmul(m, n)
        torch.backends.cuda.matmul.allow_tf32 = False

    flush_buf = torch.empty(512 * 1024 * 1024 // 4, device="cuda")  # 512 MiB > H200's L2

    variants = {"numba_lazy_tw16": numba_lazy16, "translation_int64_tw16": t64_16,
                "translation_int64_tw32": t64_32,
                "numba_tw16": numba16, "translation_tw16": t16, "translation_tw32": t32,
                "translation_generic_tw16": g16, "handwritten_tw16": hand16, "handwritten_tw32": hand32,
                "cublas_fp32": cublas, "cublas_tf32": tf32}
    timing = timed_runs(variants, reps, flush_buf.zero_)
    flops = 2.0 * h * w * k
    for name, t in timing.items():
        t["tflops"] = flops / (t["median_us"] * 1e-6) / 1e12
    base = timing["numba_tw16"]["median_us"]
    ratios = {name: base / t["median_us"] for name, t in timing.items()}
    lazy = timing["numba_lazy_tw16"]["median_us"]
    ratios["lecture_form"] = {name: lazy / t["median_us"] for name, t in timing.items()}
    ratios["translation_tw16_vs_handwritten_tw16"] = (timing["handwritten_tw16"]["median_us"]
                                                      / timing["translation_tw16"]["median_us"])
    ratios["translation_tw32_vs_handwritten_tw32"] = (timing["handwritten_tw32"]["median_us"]
                                                      / timing["translation_tw32"]["median_us"])
    torch.cuda.synchronize()
    ref = outs["numba_tw16"]
    identity = {name: bool(torch.equal(o, ref)) for name, o in outs.items()}
    maxdiff = {name: float((o - ref).abs().max()) for name, o in outs.items()}
    results["matmul"] = {"shape": [h, k, w], "timing": timing, "speedup_vs_numba_tw16": ratios,
                         "bit_identical_to_numba": identity, "max_abs_diff_vs_numba": maxdiff,
                         "numba_vs_fp64_max_abs": float((ref.double() - m.double() @ n.double()).abs().max())}
    return dropin, hand


def softmax_section(results, reps):
    """Block-per-row softmax (256 threads, shared-memory tree reductions) at 4096^2 and 8192^2."""
    import torch
    from numba import cuda

    import numba2cuda
    from corpus_harness import load_module

    mod = load_module(str(ROOT / "kernels" / "softmax.py"))
    dropin = numba2cuda.load(ROOT / "kernels" / "softmax.py", progress=False)
    flush_buf = torch.empty(512 * 1024 * 1024 // 4, device="cuda")
    out = {}
    for rows in (4096, 8192):
        x = 4 * torch.randn(rows, rows, device="cuda")
        y_nb, y_tr = torch.empty_like(x), torch.empty_like(x)
        xd, yd = cuda.as_cuda_array(x), cuda.as_cuda_array(y_nb)
        threads = mod.THREADS
        variants = {
            "numba": lambda: mod.softmax[rows, threads, 0, 0](xd, yd),
            "translation": lambda: dropin.softmax[rows, threads, 0, 0](x, y_tr),
            "torch_softmax": lambda: torch.softmax(x, dim=1),
        }
        timing = timed_runs(variants, reps, flush_buf.zero_)
        torch.cuda.synchronize()
        out[f"{rows}x{rows}"] = {"timing": timing, "bit_identical": bool(torch.equal(y_nb, y_tr)),
                                 "speedup_vs_numba": timing["numba"]["median_us"] / timing["translation"]["median_us"],
                                 "speedup_vs_torch": timing["torch_softmax"]["median_us"]
                                 / timing["translation"]["median_us"]}
    results["softmax"] = out


def host_overhead_section(results, dropin_vec, hand, iters):
    import torch
    from numba import cuda

    from corpus_harness import load_module

    vec = load_module(str(ROOT / "kernels" / "vector_add.py"))
    numba_k = next(getattr(vec, n) for n in dir(vec) if hasattr(getattr(vec, n), "py_func"))
    name = numba_k.py_func.__name__
    a = torch.ones(32, device="cuda")
    b = torch.ones(32, device="cuda")
    c = torch.empty(32, device="cuda")
    da, db, dc = cuda.as_cuda_array(a), cuda.as_cuda_array(b), cuda.as_cuda_array(c)
    drop = getattr(dropin_vec, name)
    order = _vector_add_order(numba_k)

    def args(x, y, z):
        named = {"a": x, "b": y, "out": z, "c": z, "x": x, "y": y}
        return [named[p] for p in order]

    cases = {
        "dropin_torch": lambda: drop[1, 32](*args(a, b, c)),
        "numba_torch": lambda: numba_k[1, 32](*args(a, b, c)),
        "numba_device_arrays": lambda: numba_k[1, 32](*args(da, db, dc)),
        "load_inline_function": lambda: hand.empty_launch(c, a, b),
        "torch_add": lambda: torch.add(a, b, out=c),
    }
    out = {}
    for label, fn in cases.items():
        for _ in range(200):
            fn()
        torch.cuda.synchronize()
        samples = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(iters):
                fn()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            samples.append((t1 - t0) / iters * 1e6)
        out[label] = {"median_us": statistics.median(samples), "min_us": min(samples), "max_us": max(samples)}
    results["host_overhead"] = out


def _vector_add_order(kernel):
    import inspect

    return list(inspect.signature(kernel.py_func).parameters)


def build_section(results):
    code = ("import time, sys; t = time.perf_counter(); import torch; t1 = time.perf_counter(); "
            "import numba2cuda; m = numba2cuda.load(sys.argv[1], progress=False); "
            "print(time.perf_counter() - t1, t1 - t)")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA2CUDA_CACHE=cache)
        t0 = time.perf_counter()
        cold = subprocess.run([sys.executable, "-c", code, str(ROOT / "kernels" / "matmul.py")], env=env,
                              capture_output=True, text=True)
        cold_wall = time.perf_counter() - t0
        warm = subprocess.run([sys.executable, "-c", code, str(ROOT / "kernels" / "matmul.py")], env=env,
                              capture_output=True, text=True)
    results["build"] = {
        "cold_load_s": float(cold.stdout.split()[0]) if cold.returncode == 0 else None,
        "cold_process_wall_s": cold_wall,
        "warm_load_s": float(warm.stdout.split()[0]) if warm.returncode == 0 else None,
        "import_torch_s": float(warm.stdout.split()[1]) if warm.returncode == 0 else None,
        "errors": (cold.stderr[-2000:] if cold.returncode else "") + (warm.stderr[-2000:] if warm.returncode else ""),
        "cpu_count": os.cpu_count(),
    }


def prebuild_corpus():
    """Fill the cache for every corpus module in parallel processes (16 cores on the H200 host)."""
    from concurrent.futures import ThreadPoolExecutor

    paths = sorted((ROOT / "kernels").glob("*.py"))

    def build(p):
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "translator.cli", "build", str(p)], capture_output=True, text=True,
                           cwd=ROOT)
        return p.stem, r.returncode, time.perf_counter() - t0, r.stderr[-1500:]

    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(build, paths))


def corpus_section(results):
    import numpy as np

    import corpus_harness as h
    import numba2cuda

    rows = {}
    for path in sorted((ROOT / "kernels").glob("*.py")):
        row = {}
        try:
            mod = h.load_module(str(path))
            ex_numba = mod.example(np.random.default_rng(0))
            ex_drop = mod.example(np.random.default_rng(0))
            kernel = ex_numba["kernel"]
            name = kernel.py_func.__name__
            dropin = numba2cuda.load(path, progress=False)
            ex_drop["kernel"] = getattr(dropin, name)
            h.launch_and_check(ex_numba)  # the Numba original against the NumPy reference
            h.launch_and_check(ex_drop)  # the drop-in, same launch code, NumPy arguments as Numba takes them
            worst = {}
            for i in ex_numba["expected"]:
                a, b = ex_numba["args"][i], ex_drop["args"][i]
                same = np.array_equal(a, b, equal_nan=True)
                ulp = 0
                if not same and a.dtype.kind == "f":
                    ai = a.view(np.int32 if a.dtype == np.float32 else np.int64).astype(np.int64)
                    bi = b.view(np.int32 if a.dtype == np.float32 else np.int64).astype(np.int64)
                    ulp = int(np.abs(ai - bi).max())
                worst[str(i)] = {"bit_identical": bool(same), "max_ulp": ulp,
                                 "max_abs": float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max())}
            row = {"ok": True, "kernel": name, "outputs": worst}
        except Exception as exc:  # report and go on: one broken kernel must not hide the others
            import traceback

            row = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-2000:]}
        rows[path.stem] = row
    results["corpus"] = rows


def versions():
    import numba
    import numpy
    import torch

    out = {"torch": torch.__version__, "torch_cuda": torch.version.cuda, "numba": numba.__version__,
           "numpy": numpy.__version__, "gpu": torch.cuda.get_device_name(), "python": sys.version.split()[0],
           "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    try:
        import importlib.metadata as md

        out["numba_cuda"] = md.version("numba-cuda")
    except Exception:
        pass
    smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,name", "--format=csv,noheader"],
                         capture_output=True, text=True)
    out["driver"] = smi.stdout.strip()
    nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True)
    out["nvcc"] = nvcc.stdout.strip().splitlines()[-1] if nvcc.returncode == 0 else "n/a"
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default="dropin_gpu.json")
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--iters", type=int, default=5000)
    p.add_argument("--sections", default="build,prebuild,matmul,softmax,host,corpus")
    args = p.parse_args()
    results = {"versions": versions(), "command": " ".join(sys.argv)}
    sections = args.sections.split(",")
    t0 = time.perf_counter()
    if "build" in sections:
        build_section(results)
        print("build", json.dumps(results["build"]), flush=True)
    if "prebuild" in sections:
        results["prebuild"] = prebuild_corpus()
        print("prebuild", results["prebuild"], flush=True)
    dropin = hand = None
    if "matmul" in sections:
        dropin, hand = matmul_section(results, args.reps)
        print("matmul", json.dumps(results["matmul"], indent=1), flush=True)
    if "softmax" in sections:
        softmax_section(results, args.reps)
        print("softmax", json.dumps(results["softmax"], indent=1), flush=True)
    if "host" in sections:
        import numba2cuda

        import handwritten_matmul

        host_overhead_section(results, numba2cuda.load(ROOT / "kernels" / "vector_add.py", progress=False),
                              hand or handwritten_matmul.load(), args.iters)
        print("host", json.dumps(results["host_overhead"], indent=1), flush=True)
    if "corpus" in sections:
        corpus_section(results)
        print("corpus", json.dumps({k: (v.get("outputs") if v.get("ok") else v["error"])
                                    for k, v in results["corpus"].items()}, indent=1), flush=True)
    results["elapsed_s"] = time.perf_counter() - t0
    Path(args.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
