"""Run one kernels/*.py module's ``example()`` and check it: a script, run in a subprocess.

    NUMBA_ENABLE_CUDASIM=1 python tests/corpus_harness.py kernels/matmul.py [--no-launch]
        [--size small] [--dump out.npz]

Prints one JSON object on its last line of stdout:

    {"module": ..., "mode": "simulator" | "gpu",
     "reference": {"ok": bool, "msg": str},
     "launch": {"ok": bool, "msg": str, "seconds": float} | null}

The simulator must be chosen before numba is imported, which is why this is a separate
process.  It never imports the translator.

The ``example()`` convention (each kernels/ module, below its kernels)::

    dict(kernel=..., griddim=..., blockdim=..., shared=0_or_bytes,
         args=[...],            # NumPy arrays and Python scalars, in kernel order
         expected={i: array},   # index of each output argument -> its expected value
         rtol=..., atol=...,    # optional; integer outputs are compared exactly
         inout={i, ...})        # optional; outputs the kernel accumulates into (atomics):
                                # their given initial contents are part of the input and
                                # they are NOT pre-filled with NaN / a sentinel

Checks made on a launch: every output that is not ``inout`` is first filled with NaN
(floats) or an integer that the expected output does not contain, so a kernel that
skips elements cannot pass; input arrays must come back unchanged.
"""
import argparse
import importlib.util
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run as a script: the checkout
from translator.verify.reference import launcher, simulator_shims  # noqa: E402 (the reference side's own)


# Corpus modules the rules do not translate, on purpose: the LLM backend's corpus. The rule-translation
# tests (golden, nvcc, CPU runtime, package, planted bugs) leave them out; tests/test_llm.py translates
# them through the LLM path (replayed from tests/llm_cache) and checks that the rules still reject them.
LLM_ONLY = {"exponent_histogram": "math.frexp (a tuple-returning call) is outside the rules' kernel language"}


def load_module(path):
    """Import a kernels/ module by file path (it needs no package)."""
    simulator_shims()
    name = "corpus_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_structure(ex):
    import numpy as np

    for key in ("kernel", "griddim", "blockdim", "shared", "args", "expected"):
        assert key in ex, f"example() result lacks {key!r}"
    args, expected = ex["args"], ex["expected"]
    assert expected, "expected is empty"
    for i, e in expected.items():
        assert 0 <= i < len(args), f"expected index {i} is not an argument"
        a = args[i]
        assert isinstance(a, np.ndarray), f"argument {i} is an output but not an array"
        assert isinstance(e, np.ndarray), f"expected[{i}] is not an array"
        assert a.shape == e.shape, f"argument {i}: shape {a.shape}, expected {e.shape}"
        assert a.dtype == e.dtype, f"argument {i}: dtype {a.dtype}, expected {e.dtype}"
    for i in ex.get("inout", ()):
        assert i in expected, f"inout index {i} is not in expected"
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            assert a.flags.c_contiguous, f"argument {i} is not C-contiguous"


def reference_is_nontrivial(ex):
    """The expected outputs must not look like what a kernel that did nothing leaves."""
    import numpy as np

    problems = []
    for i, e in ex["expected"].items():
        if e.dtype.names is not None:  # records (RNG states): judged by their words
            e = e.view(np.uint64)
        if e.dtype.kind in "fc" and not np.all(np.isfinite(e)):
            problems.append(f"expected[{i}] has NaN/inf")
        if not np.any(e):
            problems.append(f"expected[{i}] is all zeros")
        if e.size > 1 and np.all(e == e.flat[0]):
            problems.append(f"expected[{i}] is one repeated value {e.flat[0]!r}")
    return problems


def int_sentinel(dtype, expected):
    """An integer of ``dtype`` that occurs nowhere in ``expected``."""
    import numpy as np

    info = np.iinfo(dtype)
    for k in range(1000):
        for cand in (info.max - k, info.min + k):
            if not np.any(expected == cand):
                return cand
    raise AssertionError("no sentinel value found")


def prefill_outputs(ex):
    import numpy as np

    for i, e in ex["expected"].items():
        if i in ex.get("inout", ()):
            continue
        a = ex["args"][i]
        if a.dtype.kind in "fc":
            a.fill(np.nan)
        else:
            a.fill(int_sentinel(a.dtype, e))


def compare(ex):
    import numpy as np

    for i, e in ex["expected"].items():
        got = ex["args"][i]
        if e.dtype.names is not None:  # records (RNG states): word by word, exactly
            e, got = e.view(np.uint64), got.view(np.uint64)
        if e.dtype.kind in "fc":
            np.testing.assert_allclose(got, e, rtol=ex.get("rtol", 1e-6),
                                       atol=ex.get("atol", 0.0),
                                       err_msg=f"output argument {i}")
        elif "atol" in ex and ex["atol"]:
            diff = np.abs(got.astype(np.int64) - e.astype(np.int64))
            assert diff.max() <= ex["atol"], f"output argument {i}: max diff {diff.max()}"
        else:
            np.testing.assert_array_equal(got, e, err_msg=f"output argument {i}")


def launch_and_check(ex):
    import numpy as np

    outputs = set(ex["expected"])
    inputs = {i: a.copy() for i, a in enumerate(ex["args"])
              if isinstance(a, np.ndarray) and i not in outputs}
    prefill_outputs(ex)
    kernel = ex["kernel"]
    t0 = time.perf_counter()
    launcher(kernel, (ex["griddim"], ex["blockdim"], 0, ex["shared"]))(*ex["args"])
    seconds = time.perf_counter() - t0
    compare(ex)
    for i, before in inputs.items():
        assert np.array_equal(ex["args"][i], before, equal_nan=True), \
            f"input argument {i} was modified"
    return seconds


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("module")
    p.add_argument("--size", default="small")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-launch", action="store_true", help="only check reference()")
    p.add_argument("--dump", help="save the example's args and expected to this .npz")
    opts = p.parse_args(argv)

    import numpy as np

    sim = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
    result = {"module": opts.module, "mode": "simulator" if sim else "gpu",
              "reference": None, "launch": None}
    try:
        mod = load_module(opts.module)
        ex = mod.example(np.random.default_rng(opts.seed), size=opts.size)
        check_structure(ex)
        problems = reference_is_nontrivial(ex)
        result["reference"] = {"ok": not problems, "msg": "; ".join(problems)}
        if opts.dump:
            arrays = {f"arg{i}": a for i, a in enumerate(ex["args"])
                      if isinstance(a, np.ndarray)}
            arrays.update({f"expected{i}": e for i, e in ex["expected"].items()})
            np.savez(opts.dump, **arrays)
    except Exception:
        result["reference"] = {"ok": False, "msg": traceback.format_exc()}
        print(json.dumps(result))
        return 1

    if not opts.no_launch:
        try:
            seconds = launch_and_check(ex)
            result["launch"] = {"ok": True, "msg": "", "seconds": round(seconds, 3)}
        except Exception:
            result["launch"] = {"ok": False, "msg": traceback.format_exc(), "seconds": None}
    print(json.dumps(result))
    ok = result["reference"]["ok"] and (result["launch"] is None or result["launch"]["ok"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
