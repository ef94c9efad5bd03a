"""`numba2cuda verify`: passes the corpus, rejects planted wrong translations (exit 1, naming the first
differing index), and reports usage/translation errors with exit 2. The checker itself is tested here."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.needs("g++")  # the CPU tier compiles the translation with g++

from translator.cli import main
from translator.verify.compare import compare_arrays
from translator.errors import UserError
from translator.frontend.module import parse_file
from translator.lower.program import Options, build_program
from translator.emit.render import render_program
from translator.verify.testing import assert_equivalent
from translator.verify import format_report, verify
from corpus_harness import LLM_ONLY

ROOT = Path(__file__).resolve().parent.parent
K = ROOT / "kernels"


def translation(name):
    path = K / name
    return render_program(build_program(parse_file(str(path)), Options()), path.name)


def run_cli(capsys, *argv):
    argv = [str(a) for a in argv]
    if "--device" not in argv:  # the CPU tier, also on a machine with a GPU (where auto would pick it)
        argv += ["--device", "cpu"]
    rc = main(["verify", *argv])
    out = capsys.readouterr()
    return rc, out.out + out.err


def _rule_corpus():
    return sorted(p.name for p in K.glob("*.py") if p.stem not in LLM_ONLY and p.name != "matmul.py")


@pytest.mark.full  # CI covers the corpus on the CPU runtime in test_corpus_cpu.py; this is verify's own sweep
@pytest.mark.parametrize("name", _rule_corpus())  # every corpus kernel the rules translate; matmul: below
def test_verify_passes_corpus(capsys, name):
    rc, text = run_cli(capsys, K / name)
    assert rc == 0, text
    assert "verdict: EQUIVALENT" in text
    assert "seed: 0" in text and "never imports or runs" in text


def test_verify_several_seeds(capsys):
    rc, text = run_cli(capsys, K / "vector_add.py", "--seed", 5, "--seeds", 2, "-v")
    assert rc == 0, text
    assert "seeds: 5, 6" in text and "seed 5" in text and "seed 6" in text


def test_verify_sweeps_sizes_and_specialisations(capsys, tmp_path):
    """matmul: every tile width the translation specialises (8, 16, 32) plus one the generic kernel runs,
    each over VERIFY_SIZES plus tile-1 and tile+1; JSON and JUnit say which case is which."""
    js, ju = tmp_path / "r.json", tmp_path / "r.xml"
    rc, text = run_cli(capsys, K / "matmul.py", "--json", js, "--junit", ju, "-v", "--dists", "none")
    assert rc == 0, text
    cases = json.loads(js.read_text())["cases"]
    got = {(c["params"]["tw"], c["size"]) for c in cases}
    for tw in (8, 16, 32, 7):
        for size in ("small", 1, 67, 97, tw - 1, tw + 1):
            assert (tw, size) in got, (tw, size)
    assert all(c["specialised"]["tw"] == (c["params"]["tw"] in (8, 16, 32)) for c in cases)
    assert "tw=7 (generic kernel)" in text and "tw=32 (specialised)" in text
    assert "was skipped" in text  # large sizes: NumPy expected, and the report says so
    assert "Numba original in the CUDA simulator" in text
    import xml.etree.ElementTree as ET
    root = ET.parse(ju).getroot()
    tcs = root.findall(".//testcase")
    assert len(tcs) == len(cases) and root.get("failures") == "0"
    assert any(tc.get("name") == "matmul_k_numba[seed=0,size=67,tw=7 (generic)]" for tc in tcs)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r.xml"]


def test_junit_failure_and_sizes_option(capsys, tmp_path):
    text = translation("vector_add.py")
    cu = tmp_path / "bad.cu"
    cu.write_text(text.replace("a[i] + b[i]", "a[i] - b[i]"))
    ju = tmp_path / "r.xml"
    rc, out = run_cli(capsys, K / "vector_add.py", "--cu", cu, "--junit", ju, "--sizes", "1,129", "--seeds", 2,
                      "--dists", "none")
    assert rc == 1, out
    import xml.etree.ElementTree as ET
    root = ET.parse(ju).getroot()
    tcs = root.findall(".//testcase")
    assert [tc.get("name") for tc in tcs] == [f"vector_add[seed={s},size={n}]" for n in (1, 129) for s in (0, 1)]
    fails = [tc.find("failure") for tc in tcs]
    assert all(f is not None and "first difference at index (" in f.get("message") for f in fails)
    # integer sizes need a module that declares (with VERIFY_SIZES) that its example() takes them
    mod = tmp_path / "no_sizes.py"
    mod.write_text(re.sub(r"(?m)^VERIFY_SIZES = .*$", "", (K / "vector_add.py").read_text()))
    rc, out = run_cli(capsys, mod, "--sizes", "5")
    assert rc == 2 and "VERIFY_SIZES" in out, out


def test_distributions_redraw_float_inputs():
    result = verify(K / "vector_add.py", sizes=["small"])
    assert result.ok, format_report(result)
    by_dist = {c.distribution: c for c in result.cases}
    assert {"example", "uniform", "large", "tiny", "negative", "specials", "above", "below", "nonfinite",
            "ascending", "descending"} <= set(by_dist)
    assert all(c.reference == "Numba original in the CUDA simulator" for c in result.cases)
    inputs = {meta["distribution"]: arrays["arg0"] for meta, arrays in result.reference}
    assert np.abs(inputs["large"]).max() > 1e15 and 0 < np.abs(inputs["tiny"]).max() < 1e-15
    assert (inputs["negative"] <= 0).all() and (inputs["uniform"] >= 0).all()
    assert "inputs large" in format_report(result)
    special = {meta["distribution"]: arrays["arg0"] for meta, arrays in result.reference}
    assert (inputs["above"] > 60).all() and (inputs["below"] < -60).all() and np.isnan(special["nonfinite"]).any()
    assert np.signbit(special["specials"][special["specials"] == 0]).any()  # a negative zero among them


def test_one_off_launch_from_the_command_line(capsys, tmp_path):
    spec = "a=float32[1000]:uniform, b=float32[1000]:large, out=float32[1000]:out"
    rc, out = run_cli(capsys, K / "vector_add.py", "--args", spec, "--grid", 4, "--block", 256, "-v")
    assert rc == 0 and "size cli" in out and "Numba original in the CUDA simulator" in out, out
    bad = tmp_path / "bad.cu"
    bad.write_text(translation("vector_add.py").replace("a[i] + b[i]", "a[i] * b[i]"))
    rc, out = run_cli(capsys, K / "vector_add.py", "--args", spec, "--grid", 4, "--block", 256, "--cu", bad)
    assert rc == 1 and "first difference at index (0,)" in out, out
    for argv, message in [
        (["--args", spec], "--args needs --grid and --block"),
        (["--args", "a=float32[1000], b=float32[1000]", "--grid", 4, "--block", 256], "no value for vector_add's parameter 'out'"),
        (["--args", spec.replace("b=float32", "b=float64"), "--grid", 4, "--block", 256], "the kernel takes float32[::1], got float64[1000]"),
        (["--args", spec.replace(":uniform", ":gaussian"), "--grid", 4, "--block", 256], "unknown distribution 'gaussian'"),
    ]:
        rc, out = run_cli(capsys, K / "vector_add.py", *argv)
        assert rc == 2 and message in out, (argv, out)


def test_shared_memory_above_the_device_limit_is_rejected(capsys):
    # the lecture matmul told (by hand) to ask for 60 000 bytes of dynamic shared memory per block
    spec = "m=float32[16,16], n=float32[16,16], out=float32[16,16]:out, tw=8"
    rc, out = run_cli(capsys, K / "matmul.py", "--args", spec, "--grid", "2,2", "--block", "8,8",
                      "--shared", 60000)
    assert rc == 1 and "60000 bytes of shared memory per block" in out and "49152" in out, out
    rc, out = run_cli(capsys, K / "matmul.py", "--args", spec, "--grid", "2,2", "--block", "8,8", "--shared", 512)
    assert rc == 0, out


def test_device_cuda_without_a_gpu_is_a_usage_error(capsys):
    from translator.verify.runners import cuda_available
    if cuda_available():
        pytest.skip("a GPU is present")
    rc, out = run_cli(capsys, K / "vector_add.py", "--device", "cuda")
    assert rc == 2 and "no CUDA GPU" in out and "--device cpu" in out, out


# No false alarms: real translations over 5 seeds (20 seeds for every corpus kernel were run by hand).
@pytest.mark.parametrize("name", ["vector_add.py", "histogram.py", "reduce_sum.py", "index_math.py",
                                  "warp_reduce.py"])
def test_no_false_alarms_over_seeds(name):
    result = verify(K / name, seeds=5, sizes=["small", 1, 97])  # small budget: 3 of its sizes
    assert result.ok, format_report(result)
    assert len({c.seed for c in result.cases}) == 5


# (kernel module, what the mutation plants, old text, new text)
MATMUL_STORE = "out[r * out_shape1 + c] = p;"
PLANTED = [
    ("matmul.py", "no-op body", MATMUL_STORE, ";"),
    ("matmul.py", "skipped tail", "if (r < h && c < w) {", "if (r < h - 1 && c < w) {"),
    ("matmul.py", "missing __syncthreads", "__syncthreads();  // matmul.py:45", ";"),
    ("matmul.py", "wrong tile index", "ns[i * tw + tc]", "ns[i * tw + tr]"),
    ("matmul.py", "write to an input", MATMUL_STORE, MATMUL_STORE + " const_cast<float *>(n)[c] = 0.0f;"),
    ("reduce_sum.py", "no-op body", "atomicAdd(&total[0], buf[0]);", ";"),
    ("reduce_sum.py", "skipped tail", "i < x_shape0 ?", "i < x_shape0 - 1 ?"),
    ("reduce_sum.py", "missing __syncthreads", "__syncthreads();  // reduce_sum.py:29", ";"),
    ("reduce_sum.py", "wrong tile index", "buf[tid] += buf[tid + s];", "buf[tid] += buf[tid + s + 1];"),
    ("reduce_sum.py", "write to an input", "atomicAdd(&total[0], buf[0]);",
     "atomicAdd(&total[0], buf[0]); const_cast<float *>(x)[blockIdx.x] = 2.0f;"),
]


@pytest.mark.parametrize("name,what,old,new", PLANTED, ids=[f"{n[:-3]}-{w}" for n, w, _, _ in PLANTED])
def test_planted_bug_rejected(capsys, tmp_path, name, what, old, new):
    text = translation(name)
    assert text.count(old) == 1, f"mutation anchor {old!r} not found once"
    cu = tmp_path / "planted.cu"
    cu.write_text(text.replace(old, new))
    rc, out = run_cli(capsys, K / name, "--cu", cu, "--sizes", "small", "--dists", "none")
    assert rc == 1, f"{what}: exit {rc}\n{out}"  # 1, not 0 (passed) and not 2 (did not build)
    assert "verdict: NOT EQUIVALENT" in out
    assert re.search(r"first difference at index \(|data race on|out-of-bounds access", out), out
    if what == "write to an input":  # the write, or the race of the write with other blocks' reads
        assert "was modified" in out or re.search(r"data race on (?:element \d+ of )?global array x\b", out), out


def test_unmodified_cu_passes_and_json(capsys, tmp_path):
    cu = tmp_path / "matmul.cu"
    cu.write_text(translation("matmul.py"))
    js = tmp_path / "out" / "r.json"
    js.parent.mkdir()
    rc, out = run_cli(capsys, K / "matmul.py", "--cu", cu, "--json", js, "--sizes", "small", "--dists", "none")
    assert rc == 0, out
    data = json.loads(js.read_text())
    assert data["equivalent"] is True and data["verdict"] == "EQUIVALENT" and data["translation"] == str(cu)
    case = data["cases"][0]
    assert case["kernel"] == "matmul_k_numba" and case["seed"] == 0 and case["size"] == "small"
    assert case["outputs"][0]["name"].startswith("out") and case["runs_identical"]
    assert [p.name for p in js.parent.iterdir()] == ["r.json"]  # no temp file left behind


def test_syntax_error_exits_2(capsys, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from numba import cuda\n\n@cuda.jit\ndef k(a):\n    a[0] = = 1\n")
    rc, out = run_cli(capsys, bad)
    assert rc == 2, out
    assert "Traceback" not in out and "bad.py" in out


def test_wrong_kernel_and_missing_example_exit_2(capsys, tmp_path):
    rc, out = run_cli(capsys, K / "vector_add.py", "--kernel", "nope")
    assert rc == 2 and "Traceback" not in out
    mod = tmp_path / "noex.py"
    mod.write_text((K / "vector_add.py").read_text().split("def example")[0])
    rc, out = run_cli(capsys, mod)
    assert rc == 2 and "no example()" in out, out


def test_assert_equivalent(tmp_path):
    assert assert_equivalent(K / "vector_add.py").ok
    text = translation("vector_add.py")
    assert text.count("a[i] + b[i]") == 1, text
    with pytest.raises(AssertionError, match="first difference at index"):
        assert_equivalent(K / "vector_add.py", cu_text=text.replace("a[i] + b[i]", "a[i] - b[i]"))


def test_compare_arrays_report():
    e = np.array([1.0, 2.0, np.nan, np.inf], dtype=np.float32)
    r = compare_arrays(e, e.copy())
    assert r.ok and r.bit_identical and r.max_ulp == 0
    a = e.copy()
    a[1] = np.nextafter(np.float32(2.0), np.float32(3.0))
    r = compare_arrays(e, a)
    assert r.ok and not r.bit_identical and r.max_ulp == 1
    a[2] = 1.0  # NaN must stay NaN
    r = compare_arrays(e, a)
    assert not r.ok and r.first_index == (2,) and r.max_abs == float("inf")
    r = compare_arrays(np.arange(6, dtype=np.int32).reshape(2, 3), np.array([[0, 1, 2], [3, 5, 5]], np.int32))
    assert not r.ok and r.first_index == (1, 1) and r.expected_value == 4 and r.actual_value == 5
    assert compare_arrays(np.float64([0.0]), np.float64([-0.0])).max_ulp == 0


# ---------------------------------------------------------------------------------------------------
# The checker over the whole corpus: every kind of wrong translation tests/mutants.py plants (no-op, skipped tail,
# write past the end, missing barrier, race, wrong index, write to an input, float32 accumulated in double,
# float64 rounded through float32, int64 narrowed, atomic as a plain update, shared array too short, scalar
# hard-coded, reduction identity 0, wrong grid stride, division by zero, write far out of bounds) must be NOT
# EQUIVALENT (never a crash, never exit 2), and every equivalent rewrite (local renamed, declarations reordered,
# x*2 as x+x, redundant barrier, loop split, operands swapped) EQUIVALENT.

# LLM_ONLY: the LLM backend's corpus (tests/test_llm.py), not translated by the rules
CORPUS = sorted(p.name for p in K.glob("*.py") if p.stem not in LLM_ONLY)
_TALLY = {}  # module -> [(kind, what, verdict)]


def _prebuild(texts):
    """Build the checked CPU libraries of many translations at once (g++ in parallel processes)."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    from translator.runtime.cpurun import CHECK_FLAGS, build_cpu

    with ThreadPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1))) as pool:
        list(pool.map(lambda t: build_cpu(t[1], name=t[0], extra_flags=CHECK_FLAGS), texts))


@pytest.mark.full
@pytest.mark.parametrize("name", CORPUS)
def test_planted_translations_across_corpus(name):
    import mutants as M
    from translator.runtime.dropin import extension_name

    real = verify(K / name, sizes=["small"])  # its reference (simulator runs) is reused for every planted one
    assert real.ok, format_report(real)
    text = translation(name)
    meta = real.reference[0][0]
    from translator.lower.names import entry_name
    program = build_program(parse_file(str(K / name)), Options())
    ufunc = getattr(program, "ufuncs", {}).get(meta["kernel"])  # verify runs a ufunc's first loop kernel
    fn = next(k for k in program.kernels if entry_name(k) == (ufunc.loops[0].kernel if ufunc else meta["kernel"]))
    # a ufunc's scalars are its own (broadcast) arguments, not its loop kernel's parameters
    scalars = {} if ufunc else {fn.params[int(i)].name: v for i, v in meta["scalars"].items()}
    planted = [(kind, what, op(text, scalars)) for kind, ops in (("wrong", M.WRONG), ("equivalent", M.EQUIVALENT))
               for what, op in ops.items()]
    planted = [p for p in planted if p[2] is not None]
    _prebuild([(extension_name(K / name), t) for _, _, t in planted])
    tally = _TALLY[name] = []
    for kind, what, mutant in planted:
        try:
            verdict = verify(K / name, cu_text=mutant, cu_path=f"planted {what}", reference=real.reference,
                             fail_fast=True).verdict
        except UserError as exc:  # exit 2: the planted translation does not even build; that would test nothing
            pytest.fail(f"{name}: {what}: the planted translation does not build:\n{exc.text}")
        tally.append((kind, what, verdict))
    missed = [w for k, w, v in tally if k == "wrong" and v != "NOT EQUIVALENT"]
    false_alarms = [w for k, w, v in tally if k == "equivalent" and v != "EQUIVALENT"]
    assert not missed, f"{name}: wrong translations not rejected: {missed}"
    assert not false_alarms, f"{name}: equivalent rewrites rejected: {false_alarms}"


def test_narrowing_is_judged_per_function():
    """A helper's 32-bit loop counter `i` says nothing of the kernel's int64 `i`: the kernel's narrowed to int
    is still reported (the RNG prelude's `for (int i ...)` hid monte_carlo_pi's narrowed grid index)."""
    from translator.verify.static import narrowing_problems
    faithful = ("__device__ void helper(int64_t *s)\n{\n    for (int i = 0; i < 2; ++i) s[i] = 0;\n}\n"
                "__global__ void k(int *out)\n{\n    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;"
                "  // k.py:3\n    out[i] = 1;  // k.py:4\n}\n")
    assert narrowing_problems(faithful, faithful) == []
    given = faithful.replace("    int64_t i =", "    int i =")
    assert any("'i' is int64" in p for p in narrowing_problems(faithful, given)), narrowing_problems(faithful, given)
    # a statement repeated as it was (a loop split in two) adds no narrowing; a cast added to it does
    cast = "    out[i] = (float)(i * 2);  // k.py:4\n"
    store = "    out[i] = 1;  // k.py:4\n"
    one, two = faithful.replace(store, cast), faithful.replace(store, cast * 2)
    assert narrowing_problems(one, two) == []
    assert narrowing_problems(one, one.replace("(i * 2)", "(int)(i * 2)"))


@pytest.mark.full
def test_planted_translation_score():
    """Runs after the corpus sweep above (same module, file order): prints the mutation score and the false-alarm
    count; every kind of wrong translation applies to some kernel, and the total must not shrink."""
    if len(_TALLY) < len(CORPUS):
        pytest.skip("run with the corpus sweep (test_planted_translations_across_corpus)")
    import mutants as M
    rows = [r for t in _TALLY.values() for r in t]
    wrong = [r for r in rows if r[0] == "wrong"]
    rewrites = [r for r in rows if r[0] == "equivalent"]
    rejected = sum(v == "NOT EQUIVALENT" for _, _, v in wrong)
    false_alarms = sum(v != "EQUIVALENT" for _, _, v in rewrites)
    print(f"mutation score: {rejected}/{len(wrong)} wrong translations rejected over {len(CORPUS)} kernels; "
          f"false alarms: {false_alarms} of {len(rewrites)} equivalent rewrites")
    assert {w for _, w, _ in wrong} == set(M.WRONG), set(M.WRONG) - {w for _, w, _ in wrong}
    assert rejected == len(wrong) >= MIN_PLANTED and false_alarms == 0


MIN_PLANTED = 150


class _FakeRunner:
    """Returns the reference plus `noise` on each run (alternating sign): what float atomics do on a GPU."""

    device, poisons = "fake GPU", False

    def __init__(self, noise):
        self.noise, self.calls = noise, 0

    def run(self, name, grid, block, shared, args, poison, order=0):
        self.calls += 1
        args[1][...] = np.float32(10.0) + np.float32(self.noise * (-1) ** self.calls)
        return args


def _accumulated_case(float_atomic):
    from translator.verify.facts import KernelFacts
    meta = {"kernel": "reduce_sum", "seed": 0, "griddim": 3, "blockdim": 128, "shared": 0, "size": "small",
            "outputs": [1], "inout": [1], "nargs": 2, "scalars": {}, "fills": {}, "rtol": 1e-5, "atol": 0,
            "original": "ok", "expected_valid": False, "distribution": "example"}
    arrays = {"arg0": np.ones(300, np.float32), "arg1": np.zeros(1, np.float32),
              "orig0_1": np.array([10.0], np.float32)}
    facts = KernelFacts(["x", "total"], read={0, 1}, written={1}, atomic={1}, float_atomic={1} if float_atomic else set())
    return meta, arrays, facts


def test_float_atomic_outputs_may_differ_as_much_as_the_two_runs_do():
    """Float atomics add in an unspecified order: the budget is twice what the translation's own two runs (threads
    forward, backward) differ by, plus 1 ULP; without atomics the two runs must agree bit for bit."""
    from translator.verify.check import check_case
    meta, arrays, facts = _accumulated_case(True)
    ok = check_case(_FakeRunner(1e-6), meta, arrays, ["x", "total"], "cuda", facts=facts)
    assert ok.ok, ok.problems
    meta, arrays, facts = _accumulated_case(False)
    plain = check_case(_FakeRunner(1e-6), meta, arrays, ["x", "total"], "cuda", facts=facts)
    assert any("differs between the two runs" in p or "first difference" in p for p in plain.problems), plain.problems


ZERO_D = '''
import numpy as np
from numba import cuda


@cuda.jit
def accumulate(result, values):
    s = 0.0
    for i in range(len(values)):
        s += values[i]
    result[()] = s + result[()]


def example(rng, size):
    values = rng.random(64).astype(np.float32)
    result = np.ndarray((), dtype=np.float32)
    result[()] = 1.5
    want = np.array(np.float32(values.astype(np.float64).sum() + 1.5))
    return dict(kernel=accumulate, griddim=1, blockdim=1, args=[result, values], expected={0: want})
'''


def test_a_0d_array_keeps_its_0_dimensions_through_every_redrawn_case(capsys, tmp_path):
    """np.ndarray(()) (numba-cuda's from_buffer example holds its result in one): every case passes it to the
    translation as a 0-d array, as Numba is given it (np.ascontiguousarray made it 1-d: a type error, and a
    pointer shifted by one extent)."""
    path = tmp_path / "zero_d.py"
    path.write_text(ZERO_D)
    rc, text = run_cli(capsys, path, "--sizes", "small", "--types", "result=float32[()], values=float32[::1]")
    assert rc == 0, text
    assert "verdict: EQUIVALENT (accumulate; 11 cases" in text


@pytest.mark.needs("g++")
def test_a_module_whose_name_starts_with_a_digit_verifies(capsys, tmp_path):
    """`0x778_filter.py`: the CPU runtime's library is named after the module, and a leading digit is no C
    identifier, so verify stopped with an internal error (exit 70)."""
    path = tmp_path / "0copy.py"
    path.write_text((K / "vector_add.py").read_text())
    rc, text = run_cli(capsys, path, "--dists", "none")
    assert rc == 0, text
    assert "EQUIVALENT" in text


@pytest.mark.needs("g++")
def test_a_module_importing_numbas_device_array_class_verifies(capsys, tmp_path):
    """`from numba.cuda.cudadrv.devicearray import DeviceNDArray` for a host function's annotation (an ecology
    simulator's): the simulator's devicearray module lacks that name, so the reference could not import the
    module (exit 2)."""
    path = tmp_path / "annotated.py"
    path.write_text("from numba.cuda.cudadrv.devicearray import DeviceNDArray\n" + (K / "vector_add.py").read_text()
                    + "\n\ndef add_on_gpu(a: DeviceNDArray, b: DeviceNDArray, out: DeviceNDArray) -> None:\n"
                      "    pass\n")
    rc, text = run_cli(capsys, path, "--dists", "none")
    assert rc == 0, text
