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


@pytest.mark.parametrize("name", _rule_corpus())  # every corpus kernel the rules translate; matmul: below
def test_verify_passes_corpus(capsys, name):
    rc, text = run_cli(capsys, K / name)
    assert rc == 0, text
    assert "verdict: EQUIVALENT" in text
    assert "seed: 0" in text and "never imports or runs" in text


def test_verify_several_seeds(capsys):
    rc, text = run_cli(capsys, K / "vector_add.py", "--seed", 5, "--seeds", 2)
    assert rc == 0, text
    assert "seeds: 5, 6" in text and "seed 5" in text and "seed 6" in text


def test_verify_sweeps_sizes_and_specialisations(capsys, tmp_path):
    """matmul: every tile width the translation specialises (8, 16, 32) plus one the generic kernel runs,
    each over VERIFY_SIZES plus tile-1 and tile+1; JSON and JUnit say which case is which."""
    js, ju = tmp_path / "r.json", tmp_path / "r.xml"
    rc, text = run_cli(capsys, K / "matmul.py", "--json", js, "--junit", ju)
    assert rc == 0, text
    cases = json.loads(js.read_text())["cases"]
    got = {(c["params"]["tw"], c["size"]) for c in cases}
    for tw in (8, 16, 32, 7):
        for size in ("small", 1, 67, 97, tw - 1, tw + 1):
            assert (tw, size) in got, (tw, size)
    assert all(c["specialised"]["tw"] == (c["params"]["tw"] in (8, 16, 32)) for c in cases)
    assert "tw=7 (generic kernel)" in text and "tw=32 (specialised)" in text
    assert "simulator skipped" in text  # large sizes: NumPy expected, and the report says so
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
    assert set(by_dist) == {"example", "uniform", "large", "tiny", "negative"}
    assert all(c.reference == "Numba original in the CUDA simulator" for c in result.cases)
    inputs = {meta["distribution"]: arrays["arg0"] for meta, arrays in result.reference}
    assert np.abs(inputs["large"]).max() > 1e15 and 0 < np.abs(inputs["tiny"]).max() < 1e-15
    assert (inputs["negative"] <= 0).all() and (inputs["uniform"] >= 0).all()
    assert "inputs=large" in format_report(result) or "inputs large" in format_report(result)


def test_one_off_launch_from_the_command_line(capsys, tmp_path):
    spec = "a=float32[1000]:uniform, b=float32[1000]:large, out=float32[1000]:out"
    rc, out = run_cli(capsys, K / "vector_add.py", "--args", spec, "--grid", 4, "--block", 256)
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
        (["--args", spec.replace(":out", ""), "--grid", 4, "--block", 256], "mark the arrays to compare with :out"),
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
    assert "first difference at index (" in out, out
    if what == "write to an input":
        assert "was modified" in out


def test_unmodified_cu_passes_and_json(capsys, tmp_path):
    cu = tmp_path / "matmul.cu"
    cu.write_text(translation("matmul.py"))
    js = tmp_path / "out" / "r.json"
    js.parent.mkdir()
    rc, out = run_cli(capsys, K / "matmul.py", "--cu", cu, "--json", js, "--sizes", "small", "--dists", "none")
    assert rc == 0, out
    data = json.loads(js.read_text())
    assert data["equivalent"] is True and data["translation"] == str(cu)
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
# The checker over the whole corpus: planted wrong translations, made by string mutations of each
# kernel's real translation, must each be rejected (verify's verdict NOT EQUIVALENT, i.e. exit 1).

# LLM_ONLY: the LLM backend's corpus (tests/test_llm.py), not translated by the rules
CORPUS = sorted(p.name for p in K.glob("*.py") if p.stem not in LLM_ONLY)
STORE_OPS = r"(?:=|\+=|-=|\*=|/=)"


def kernel_body(text):
    """(start, end, signature) of the (first) __global__ kernel's body in the translation text."""
    m = re.search(r"__global__ void \w+\(([^)]*)\)\n\{\n", text)
    assert m, "no __global__ kernel in the translation"
    end = text.index("\n}\n", m.end())
    return m.end(), end, m.group(1)


def pointer_params(signature):
    """({name: type} of read-only inputs, [names] of outputs) from the kernel's parameter list."""
    inputs, outputs = {}, []
    for part in signature.split(","):
        pm = re.fullmatch(r"\s*(const )?([\w:]+) \*(\w+)\s*", part)
        if pm:
            if pm.group(1):
                inputs[pm.group(3)] = pm.group(2)
            else:
                outputs.append(pm.group(3))
    return inputs, outputs


def blank_statement(line):
    """`    x[i] = y;  // f.py:3` -> `    ;  // f.py:3`."""
    code, sep, comment = line.partition("  //")
    return code[: len(code) - len(code.lstrip())] + ";" + sep + comment


def _subst_body(text, fn):
    start, end, sig = kernel_body(text)
    new = fn(text[start:end], sig)
    return None if new is None else text[:start] + new + text[end:]


def mut_noop(body, sig):
    _, outputs = pointer_params(sig)
    store = re.compile(r"^\s*(?:(?:%s)\[.*\]\s*%s |atomic\w+\(&(?:%s)\[)" % ("|".join(outputs), STORE_OPS,
                                                                            "|".join(outputs)))
    lines = body.split("\n")
    idx = [i for i, l in enumerate(lines) if outputs and store.match(l)]
    if not idx:
        return None
    lines[idx[-1]] = blank_statement(lines[idx[-1]])
    return "\n".join(lines)


def mut_tail(body, sig):
    """The first bound check against an array extent (or a local copied from one) loses its last element."""
    extents = set(re.findall(r"\b\w+_shape\d\b", sig))
    extents |= set(re.findall(r"int64_t (\w+) = \w+_shape\d;", body))
    for m in re.finditer(r"(?<![<>=!]) < (\w+)\b(?! \+| -| \*| /)", body):
        if m.group(1) in extents:
            return body[: m.end()] + " - 1" + body[m.end():]
    return None


def mut_nosync(body, sig):
    lines = body.split("\n")
    idx = [i for i, l in enumerate(lines) if l.strip().startswith("__syncthreads();")]
    if not idx:
        return None
    lines[idx[0]] = blank_statement(lines[idx[0]])
    return "\n".join(lines)


def mut_race(body, sig):
    if "__shared__" not in body and "n2c_dynamic_smem" not in body:
        return None
    lines = body.split("\n")
    idx = [i for i, l in enumerate(lines) if l.strip().startswith("__syncthreads();")]
    if len(idx) < 2:
        return None  # one barrier: the same mutant as "missing __syncthreads"
    lines[idx[-1]] = blank_statement(lines[idx[-1]])
    return "\n".join(lines)


def mut_index(body, sig):
    """The last load from a read-only input reads element (i / 2) instead of i (still in bounds).

    The last, not the first: softmax's first loads feed the row maximum, which the result does not
    depend on (softmax(x) == softmax(x - c)), so a wrong index there is an equivalent mutant."""
    inputs, _ = pointer_params(sig)
    found = list(re.finditer(r"\b(%s)\[" % "|".join(inputs), body)) if inputs else []
    if not found:
        return None
    m = found[-1]
    depth, j = 1, m.end()
    while depth:
        depth += {"[": 1, "]": -1}.get(body[j], 0)
        j += 1
    return body[: m.end()] + "(" + body[m.end(): j - 1] + ") / 2" + body[j - 1:]


def mut_write_input(body, sig):
    inputs, _ = pointer_params(sig)
    if not inputs:
        return None
    name, ty = next(iter(inputs.items()))
    plant = (f"    if (threadIdx.x == 0 && threadIdx.y == 0 && blockIdx.x == 0 && blockIdx.y == 0) "
             f"const_cast<{ty} *>({name})[0] = ({ty})({name}[0] == ({ty})7 ? 8 : 7);\n")
    return plant + body


MUTATIONS = {"no-op (final store removed)": mut_noop, "skipped tail (off-by-one guard)": mut_tail,
             "missing __syncthreads": mut_nosync, "wrong index": mut_index,
             "write to an input (const_cast)": mut_write_input, "shared-memory race (last barrier removed)": mut_race}
WHY_SKIPPED = {"no-op (final store removed)": "no store to an output array found",
               "skipped tail (off-by-one guard)": "no bound check against an array extent",
               "missing __syncthreads": "the kernel has no __syncthreads",
               "wrong index": "no load from a read-only input",
               "write to an input (const_cast)": "no read-only input array",
               "shared-memory race (last barrier removed)": "no shared memory or fewer than two barriers"}
_TALLY = {}  # module -> (applicable, rejected, skipped reasons)


@pytest.mark.parametrize("name", CORPUS)
def test_planted_bugs_rejected_across_corpus(name):
    # The real translation passes, against example()'s NumPy expected (sim_max_threads=0: the simulator
    # is tested above and is slow); its reference is reused for every mutant.
    real = verify(K / name, sim_max_threads=0, dists=())
    assert real.ok, format_report(real)
    text = translation(name)
    applied, rejected, skipped = 0, [], []
    for what, fn in MUTATIONS.items():
        mutant = _subst_body(text, fn)
        if mutant is None or mutant == text:
            skipped.append(f"{what}: {WHY_SKIPPED[what]}")
            continue
        applied += 1
        try:
            result = verify(K / name, cu_text=mutant, cu_path=f"planted {what}", reference=real.reference)
        except UserError as exc:  # exit 2: the mutant does not even build; that would test nothing
            pytest.fail(f"{name}: {what}: the planted translation does not build:\n{exc.text}")
        if not result.ok:
            rejected.append(what)
            assert any("first difference at index (" in p or "launch failed" in p
                       for c in result.cases for p in c.problems), format_report(result)
    _TALLY[name] = (applied, len(rejected), skipped)
    missed = [w for w in MUTATIONS if w not in rejected and not any(s.startswith(w + ":") for s in skipped)]
    assert not missed, f"{name}: planted bugs accepted as equivalent: {missed}"


def test_planted_bug_count():
    """Runs after the corpus sweep above (same module, file order): the total must not shrink."""
    if len(_TALLY) < len(CORPUS):
        pytest.skip("run with the corpus sweep (test_planted_bugs_rejected_across_corpus)")
    applied = sum(a for a, _, _ in _TALLY.values())
    rejected = sum(r for _, r, _ in _TALLY.values())
    for name, (_, _, skipped) in sorted(_TALLY.items()):
        for s in skipped:
            print(f"skipped {name}: {s}")
    print(f"planted bugs rejected: {rejected}/{applied} over {len(CORPUS)} kernels")
    assert rejected == applied and applied >= MIN_PLANTED, (rejected, applied)


MIN_PLANTED = 55


class _FakeRunner:
    """Returns the reference plus `noise` on each run (alternating sign): what float atomics do on a GPU."""

    device, poisons = "fake GPU", False

    def __init__(self, noise):
        self.noise, self.calls = noise, 0

    def run(self, name, grid, block, shared, args, poison):
        self.calls += 1
        args[1][...] = np.float32(10.0) + np.float32(self.noise * (-1) ** self.calls)
        return args


def _accumulated_case(inout):
    meta = {"kernel": "reduce_sum", "seed": 0, "griddim": 3, "blockdim": 128, "shared": 0, "size": "small",
            "outputs": [1], "inout": inout, "nargs": 2, "scalars": {}, "fills": {}, "rtol": 1e-5, "atol": 0,
            "original": "ok", "expected_valid": False, "distribution": "example"}
    arrays = {"arg0": np.ones(300, np.float32), "arg1": np.zeros(1, np.float32),
              "orig1": np.array([10.0], np.float32)}
    return meta, arrays


def test_float_atomic_outputs_may_differ_between_runs_within_tolerance():
    from translator.verify.check import check_case
    meta, arrays = _accumulated_case(inout=[1])
    ok = check_case(_FakeRunner(2e-6), meta, arrays, ["x", "total"], "cuda")
    assert ok.ok, ok.problems
    bad = check_case(_FakeRunner(1e-3), meta, arrays, ["x", "total"], "cuda")
    assert not bad.ok and any("accumulated" in p for p in bad.problems), bad.problems
    # an output that is not accumulated into must still come out bit-identical from both runs
    meta, arrays = _accumulated_case(inout=[])
    plain = check_case(_FakeRunner(2e-6), meta, arrays, ["x", "total"], "cuda")
    assert any("differs between two runs" in p for p in plain.problems), plain.problems
