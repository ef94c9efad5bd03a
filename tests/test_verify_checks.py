"""verify's verdicts where they used to be wrong: a reference that computes what Numba computes (not what NumPy 2
computes in the simulator), a translation that cannot take verify down with it, out-of-bounds accesses and races
found on the CPU, integer narrowings no input reaches, partial and in-place outputs without declarations, an
UNDECIDED verdict with its own exit code, and the command's options."""

import json
import re
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from translator.cli import main
from translator.emit.render import render_program
from translator.frontend.module import parse_file
from translator.lower.program import Options, build_program
from translator.verify import verify

import mutants as M

ROOT = Path(__file__).resolve().parent.parent
K = ROOT / "kernels"
F = Path(__file__).resolve().parent / "verify_fixtures"


def translation(path):
    path = Path(path)
    return render_program(build_program(parse_file(str(path)), Options()), path.name)


def run_cli(capsys, *argv):
    argv = [str(a) for a in argv]
    if "--device" not in argv:
        argv += ["--device", "cpu"]
    rc = main(["verify", *argv])
    out = capsys.readouterr()
    return rc, out.out + out.err


# ---------------------------------------------------------------- the reference computes what Numba computes

@pytest.mark.parametrize("name", ["promote.py", "numba_grid.py", "lecture_dynamic.py", "shuffle.py",
                                  "complex_powers.py"])
@pytest.mark.needs("g++")
def test_reference_follows_numba_not_the_simulator(capsys, name):
    """promote: NEP 50 promotion, int8 + int8, float32 math.exp, a float32 compared with a float literal;
    numba_grid: numba.cuda.grid after `import numba`; lecture_dynamic: cuda.shared.array(0, dtype=np.float32);
    shuffle: warp shuffles, which the simulator lacks; complex_powers: NumPy multiplies for z ** 2, numba-cuda
    calls its cpow. Each faithful translation is EQUIVALENT to the original,
    which ran (not a NumPy stand-in), also on redrawn inputs."""
    rc, out = run_cli(capsys, F / name, "--json", "-")
    assert rc == 0, out
    data = json.loads(out[out.index("{"):out.rindex("}") + 1])
    assert data["verdict"] == "EQUIVALENT"
    assert all(c["reference"] == "Numba original in the CUDA simulator" for c in data["cases"]), data["cases"]


@pytest.mark.needs("g++")
def test_simulator_divergences_are_not_blamed_on_the_translation():
    """A translation that computes what the simulator (NumPy 2) computes is wrong: 0.1 * x rounded to float32."""
    text = translation(F / "promote.py")
    assert text.count("dout[i] = 0.1 * x[i];") == 1, text
    wrong = text.replace("dout[i] = 0.1 * x[i];", "dout[i] = (double)(0.1f * x[i]);")
    result = verify(F / "promote.py", cu_text=wrong, dists=())
    assert result.verdict == "NOT EQUIVALENT", result.cases[0].problems
    assert any("dout" in p for p in result.cases[0].problems)


@pytest.mark.needs("g++")
def test_an_original_that_never_ends_is_dropped_and_verify_carries_on():
    """An @njit helper loops over a count near int64's limit (the integer-edge redraw): compiled, it holds the GIL,
    so nothing inside the reference process can stop it (on the GPU, a kernel cannot be stopped either: index_math
    hung verify --device cuda on the H200 this way). The process is ended at the launch's limit and resumed after
    that case, which is dropped with the reason (two kernels: the second resume keeps the first's); the other
    cases still decide."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "translator.cli", "verify", str(F / "njit_endless.py"), "--device",
                           "cpu", "--dists", "limits,ints", "--json", "-"], capture_output=True, text=True,
                          timeout=240, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert data["verdict"] == "EQUIVALENT" and {c["kernel"] for c in data["cases"]} == {"hashes", "offsets"}, data
    ended = re.findall(r"example_(\w+)\(rng, size='small'\) with limits inputs: the Numba original did not finish "
                       r"in \d+ s in the CUDA simulator", proc.stdout)  # the JSON report
    assert sorted(ended) == ["hashes", "offsets"], proc.stdout  # resumed twice, each reason kept once


# ---------------------------------------------------------------- isolation: a death is a verdict

@pytest.mark.parametrize("plant, signal", [
    ("{ volatile int z = 0; int q = 7 / z; if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = (float)q; }",
     "SIGFPE"),
    ("if (threadIdx.x == 0 && blockIdx.x == 0) { volatile float *p = (float *)16; *p = 1.0f; }", "SIGSEGV"),
    ("if (threadIdx.x == 0 && blockIdx.x == 0) __builtin_trap();", "SIGILL"),
])
@pytest.mark.needs("g++")
def test_a_crashing_translation_is_a_verdict_and_the_reports_are_written(capsys, tmp_path, plant, signal):
    text = translation(K / "vector_add.py")
    cu = tmp_path / "crash.cu"
    cu.write_text(text.replace("    int64_t i =", f"    {plant}\n    int64_t i =", 1))
    js, ju = tmp_path / "r.json", tmp_path / "r.xml"
    rc, out = run_cli(capsys, K / "vector_add.py", "--cu", cu, "--sizes", "small", "--dists", "none",
                      "--json", js, "--junit", ju)
    assert rc == 1, out
    assert signal in out and "thread (0,0,0) of block (0,0,0)" in out, out
    assert json.loads(js.read_text())["verdict"] == "NOT EQUIVALENT"
    assert ET.parse(ju).getroot().find(".//failure") is not None


@pytest.mark.needs("g++")
def test_a_translation_that_never_ends_is_a_verdict(capsys, tmp_path, monkeypatch):
    from translator.verify import runners
    monkeypatch.setattr(runners, "CASE_SECONDS", 3.0)
    text = translation(K / "vector_add.py")
    cu = tmp_path / "hang.cu"
    cu.write_text(text.replace("    int64_t i =", "    while (threadIdx.x == 0) { }\n    int64_t i =", 1))
    rc, out = run_cli(capsys, K / "vector_add.py", "--cu", cu, "--sizes", "small", "--dists", "none")
    assert rc == 1 and "timed out after 3 s" in out, out


# ---------------------------------------------------------------- memory safety and races on the CPU

def _verdict_of(path, mutant, **kw):
    text = translation(path)
    planted = mutant(text, kw.pop("scalars", {}))
    assert planted is not None and planted != text
    return verify(path, cu_text=planted, **kw)


def _problems(result):
    return "\n".join(result.problems + [p for c in result.cases for p in c.problems])


@pytest.mark.needs("g++")
def test_a_write_one_past_a_global_array_names_array_element_and_thread():
    result = _verdict_of(K / "vector_add.py", M.past_end, sizes=[129], dists=())
    text = _problems(result)
    assert result.verdict == "NOT EQUIVALENT"
    assert re.search(r"out-of-bounds access: thread \(\d+,0,0\) of block \(1,0,0\) (writes|reads) 4 bytes at element 129 "
                     r"of global array \w+ \(float32\[129\]\): past its end", text), text


@pytest.mark.needs("g++")
def test_a_static_shared_array_one_too_short_is_caught():
    result = _verdict_of(K / "reduce_sum.py", M.shared_short, sizes=["small"], dists=())
    assert "past its end" in _problems(result) and "shared array buf" in _problems(result), _problems(result)


@pytest.mark.parametrize("name, mutant, where", [
    ("reduce_sum.py", M.atomic_to_plain, "global array total"),  # a plain += from every block
    ("reduce_sum.py", M.nosync, "shared array buf"),  # a missing __syncthreads
    ("histogram.py", M.atomic_to_plain, "shared array local"),
])
@pytest.mark.needs("g++")
def test_races_are_found_without_a_gpu(name, mutant, where):
    result = _verdict_of(K / name, mutant, sizes=["small"], dists=())
    text = _problems(result)
    assert result.verdict == "NOT EQUIVALENT" and "data race on" in text and where in text, text
    assert re.search(r"thread \(\d+,\d+,\d+\) of block \(\d+,\d+,\d+\) \w+ it and thread", text), text


@pytest.mark.needs("g++")
def test_a_flag_many_threads_set_alike_is_not_a_race_but_a_racy_original_is_undecided(capsys):
    rc, out = run_cli(capsys, F / "flags.py", "--kernel", "any_negative")
    assert rc == 0, out
    rc, out = run_cli(capsys, F / "flags.py", "--kernel", "last_writer", "--dists", "none")
    assert rc == 3 and "verdict: UNDECIDED" in out and "the original itself has a data race" in out, out
    rc, out = run_cli(capsys, F / "flags.py", "--kernel", "compact", "--dists", "none")
    assert rc == 3 and "depends on the order its threads run in" in out, out


# ---------------------------------------------------------------- numbers: budgets, narrowing, inputs

@pytest.mark.parametrize("name, mutant", [
    ("matmul.py", M.widen_accumulator),  # float32 accumulated in double: 0 to 3 ULP
    ("index_math.py", M.round_through_float),  # a float64 result rounded through float32
    ("vector_add.py", M.narrow_index),  # an int64 index kept in 32 bits
    ("softmax.py", M.zero_identity),  # a max reduction starting from 0: only inputs far below zero show it
])
@pytest.mark.needs("g++")
def test_precision_and_width_changes_are_rejected(name, mutant):
    result = _verdict_of(K / name, mutant, sizes=["small"])
    assert result.verdict == "NOT EQUIVALENT", _problems(result)


@pytest.mark.needs("g++")
def test_a_scalar_hard_coded_to_the_example_value_is_rejected():
    scalars = {"lo": -50, "width": 7}
    result = _verdict_of(K / "histogram.py", M.scalar_constant, scalars=scalars, sizes=["small"])
    assert result.verdict == "NOT EQUIVALENT"
    assert any(c.distribution == "scalars" and not c.ok for c in result.cases), _problems(result)


@pytest.mark.needs("g++", "c++")
def test_budget_is_reported_with_its_reason(capsys):
    rc, out = run_cli(capsys, K / "softmax.py", "--sizes", "small", "--dists", "none")
    assert rc == 0 and "<= 4 ULP" in out and "math.exp x2 (2 ULP each)" in out, out
    rc, out = run_cli(capsys, K / "vector_add.py", "--sizes", "small", "--dists", "none")
    assert rc == 0 and "<= 0 ULP" in out and "bit-identical" in out, out


@pytest.mark.needs("g++")
def test_integer_redraws_reach_zero_negatives_and_the_limits():
    result = verify(K / "index_math.py", sizes=["small"], dists=("ints", "limits"))
    values = {meta["distribution"]: arrays["arg1"] for meta, arrays in result.reference}
    assert (values["ints"] == 0).any() and (values["ints"] < 0).any()
    assert result.ok or all(c.ok for c in result.cases)


# ---------------------------------------------------------------- outputs without declarations

@pytest.mark.needs("g++", "c++")
def test_partial_and_in_place_outputs_need_no_declaration(capsys):
    rc, out = run_cli(capsys, F / "partial_inplace.py", "-v")
    assert rc == 0, out
    assert "diagonal" in out and "leaky_relu" in out and "example_diagonal()" in out
    # the untouched elements of the diagonal-only output are compared too: writing them is wrong
    text = translation(F / "partial_inplace.py")
    wrong = text.replace("out[i * out_shape1 + i] = ", "out[i * out_shape1 + (i + 1) % a_shape0] = out[i * out_shape1 + i] = ")
    assert wrong != text
    result = verify(F / "partial_inplace.py", cu_text=wrong, kernel="diagonal", dists=(),
                    options=Options(kernels=["diagonal"]))
    assert result.verdict == "NOT EQUIVALENT", result.cases[0].problems


# ---------------------------------------------------------------- verdicts and the command

@pytest.mark.needs("g++")
def test_undecided_has_its_own_verdict_and_exit_code(capsys):
    # no simulator run (0 threads allowed) and no expected values: nothing can stand for the original
    rc, out = run_cli(capsys, F / "promote.py", "--sim-max-threads", "0", "--dists", "none")
    assert rc == 3 and "verdict: UNDECIDED" in out and "no reference" in out, out


@pytest.mark.needs("g++", "c++")
def test_json_and_junit_to_stdout_and_types(capsys, tmp_path):
    mod = tmp_path / "untyped.py"
    mod.write_text((K / "vector_add.py").read_text().replace('@cuda.jit("void(float32[::1], float32[::1], float32[::1])")',
                                                              "@cuda.jit"))
    types = "a=float32[::1], b=float32[::1], out=float32[::1]"
    rc, out = run_cli(capsys, mod, "--types", types, "--sizes", "small", "--dists", "none", "--junit", "-")
    assert rc == 0 and "<testsuites" in out, out
    assert not (Path.cwd() / "-").exists()


@pytest.mark.needs("g++")
def test_one_off_launch_with_nothing_to_compare_exits_2(capsys):
    spec = "x=float32[200], found=int32[1]"
    rc, out = run_cli(capsys, F / "flags.py", "--kernel", "any_negative", "--args", spec, "--grid", 2,
                      "--block", 128)
    assert rc == 0, out  # `found` is written: compared without a mark
    rc, out = run_cli(capsys, F / "flags.py", "--kernel", "any_negative", "--args", spec, "--grid", 40,
                      "--block", 128, "--sim-max-threads", 1000)
    assert rc == 2 and "nothing could be compared" in out and "5120 CUDA threads" in out, out


@pytest.mark.needs("g++", "c++")
def test_summary_by_default_every_case_with_v(capsys):
    rc, out = run_cli(capsys, K / "vector_add.py", "--sizes", "small,1", "--dists", "none")
    assert rc == 0 and "vector_add: 2 cases (2 equivalent)" in out and "seed 0  size 1" not in out, out
    rc, out = run_cli(capsys, K / "vector_add.py", "--sizes", "small,1", "--dists", "none", "-v")
    assert rc == 0 and "seed 0  size 1" in out, out


@pytest.mark.needs("g++", "c++")
def test_tuple_parameters_are_verified_and_a_wrong_item_is_rejected(capsys):
    """out.shape and a (scale, offset) pair passed as tuples (typed by a signature, and by NUMBA2CUDA_TYPES'
    UniTuple): translated with a C parameter per item, launched from example()'s tuples, EQUIVALENT; the
    translation reading the wrong item of the tuple is NOT EQUIVALENT."""
    rc, out = run_cli(capsys, F / "tuple_params.py", "--seeds", "1", "--dists", "none")
    assert rc == 0 and "verdict: EQUIVALENT (fill, stencil" in out, out
    text = translation(F / "tuple_params.py")
    assert "int64_t shape_0, int64_t shape_1, double scale_0, int scale_1" in text
    wrong = text.replace("(i * shape_1 + j) * scale_0", "(i * shape_0 + j) * scale_0")
    assert wrong != text
    result = verify(F / "tuple_params.py", cu_text=wrong, kernel="fill", dists=(), options=Options(kernels=["fill"]))
    assert result.verdict == "NOT EQUIVALENT", result.cases[0].problems


# Constructs of kernels collected from public projects (issue 17), each fixture EQUIVALENT to the Numba original,
# and a wrong translation of one of its kernels (what numba2cuda printed before a fix) NOT EQUIVALENT:
# - real_world_constructs.py: windows, tuple loops, unpacked arrays, clipped slices, reassigned tuples; the slice's
#   length not clipped at the array's end reads past it;
# - real_world_constructs_2.py: compile-time arguments of a device function, zip(enumerate()), tuple slices, rows of
#   a 2-D array, a named row slice, 2 ** k, an int counter, atomics on complex parts; the counter read without its
#   int64 conversion wraps (hits * 10**9 in an int); a parameter and a local array rebound to new local arrays;
#   an Optional result of a device function; a tuple of tuples indexed at run time; raise and assert; a tuple
#   of arrays passed to a device function.
# - real_world_constructs_3.py: a loop unpacking pairs and `...`, a loop counter rebound in its body, device functions
#   returning the arrays they were given, an expression statement without effect; reading the counter where the
#   body rebound it (the C name the two shared) writes other elements.
# - real_world_constructs_5.py: a column-major matrix, device functions giving back the arrays they were given with
#   a number, locals set to None and later to numbers, rows of a window unpacked by a loop, an IntEnum and a list
#   searched with `in`; the column-major matrix read row-major reads other elements.
# - real_world_constructs_6.py: records (structured dtypes): a reference to one, fields by name and by attribute, a
#   packed dtype's misaligned float64s, a bool field read by a device function, whole records copied, an array
#   field; the velocity negated into the wrong field is caught.
# - real_world_constructs_7.py: names Numba's SSA makes several variables (an array's name taken over by a number,
#   a view's by a tuple, a parameter's by its element), a loop over a list of tuples, a device function returning
#   a tuple of tuples (made by cuda.jit(func_or_sig=None, device=True)), a tuple into a slice, a tuple of tuples
#   passed to a device function, two shared buffers swapped each step; a use that reads the view where the tuple
#   took the name over (the webs parted wrongly) is caught.
# - reductions.py: NumPy's whole-array reductions (np.sum, a.mean(), np.std, np.nansum, np.prod, count_nonzero,
#   all/any) and literal_unroll over a tuple of constant arrays; a float32 row summed in double is caught.
# - real_world_constructs_8.py: functions defined inside a kernel (reading its constant, its parameter and a
#   per-thread variable, calling each other, a lambda), math.nextafter/gamma, the in-place operator functions,
#   NumPy's comparison, logical and bitwise ufuncs, cmath's inverse functions; the inner function given 0 for the
#   thread's index it reads of the kernel is caught.
# - real_world_constructs_11.py: a name typed per use as Numba's phi nodes type it (an int index rebound to a float
#   on one branch); the float written into the int variable, which the uses before the join read, is caught.
# - real_world_constructs_12.py: float32 by uint8 in float32, uint64 against int64 compared as float64, math.*
#   typed by numba-cuda's declarations; the convolution's product in double (the old typing) is caught.
# - real_world_constructs_13.py: math.pow of a float32 and a cast literal (`int32(3)`), which the old lowering
#   took for an int64 and so computed in double, is caught; a device function that runs off its end returns None.
REAL_WORLD = [
    ("real_world_constructs.py", {"stencil", "block_sum", "tuples", "unpack_and_clip"}, "unpack_and_clip",
     "n2c::slice_len((int64_t)1, (int64_t)5, st_shape1)", 2, "4"),
    ("real_world_constructs_2.py", {"atomic_bins", "atomic_peaks", "binned", "checked", "deposit", "mixed",
                                    "pairs", "rebound", "stream"}, "mixed",
     "(int64_t)hits * 1000000000", 1, "hits * 1000000000"),
    ("real_world_constructs_3.py", {"bloch", "neighbours", "shifted", "slip"}, "shifted",
     "out[i_] = x[i_] * i_;", 1, "out[i] = x[i] * i;"),
    ("real_world_constructs_4.py", {"camera", "columns", "pixels", "rays"}, "pixels",
     "col[x * m_shape1] = col[x * m_shape1] * 2.0 + x;", 1, "col[x] = col[x] * 2.0 + x;"),
    ("real_world_constructs_5.py", {"rows", "search", "sponge", "statuses", "transposed"}, "transposed",
     "b[j * b_shape0 + k]", 1, "b[k * b_shape0 + j]"),
    ("real_world_constructs_6.py", {"centroid", "gather", "measure", "pack", "step"}, "step",
     "p->vx = -p->vx;", 1, "p->vy = -p->vx;"),
    ("real_world_constructs_7.py", {"advance", "bounce", "pingpong", "rows", "shade", "sides", "slicer", "square"},
     "shade", "out[i * out_shape1 + 2] = q_2_1;", 1, "out[i * out_shape1 + 2] = q[1];"),
    ("reductions.py", {"builtin_sums", "row_stats", "totals", "unrolled"}, "row_stats",
     "n2c::array_sum<float>(row, m_shape1)", 1, "n2c::array_sum<double>(row, m_shape1)"),
    ("real_world_constructs_8.py", {"compare_arrays", "inverse", "library", "primitives"}, "primitives",
     "mix(neg(x[k]), 3.0, around(k, i, x, x_shape0), 2.0)", 1, "mix(neg(x[k]), 3.0, around(k, 0, x, x_shape0), 2.0)"),
    ("real_world_constructs_9.py", {"gated", "totals", "walk"}, "gated", "if (learn == true) {", 1,
     "if (learn != true) {"),
    ("real_world_constructs_10.py", {"lock_order"}, "lock_order", "first = i;", 1, "first = j;"),
    ("real_world_constructs_11.py", {"alias_draw", "chained", "column_sums", "tagged", "transposed"}, "alias_draw", "    k = alias[", 1, "    k_i64 = alias["),
    ("real_world_constructs_12.py", {"convolve", "math_types", "offsets"}, "convolve",
     "s += mask[k * mask_shape1 + m] * image[", 1, "s += (double)mask[k * mask_shape1 + m] * image["),
    ("real_world_constructs_13.py", {"lookup", "powers"}, "powers", "n2c::pow_int(x[i], 3)", 1,
     "pow((double)x[i], 3.0)"),
]


@pytest.mark.needs("g++")
@pytest.mark.parametrize("name, kernels, kernel, right, count, wrong", REAL_WORLD, ids=[r[0] for r in REAL_WORLD])
def test_real_world_constructs_are_equivalent_and_the_old_translation_is_rejected(name, kernels, kernel, right, count,
                                                                                  wrong):
    path = F / name
    result = verify(path, dists=("uniform", "negative"))
    assert result.verdict == "EQUIVALENT", [c.problems for c in result.cases if c.problems]
    assert {c.kernel for c in result.cases} == kernels
    text = translation(path)
    assert text.count(right) == count, text
    rejected = verify(path, kernel=kernel, cu_text=text.replace(right, wrong), dists=())
    assert rejected.verdict == "NOT EQUIVALENT"


@pytest.mark.gpu
@pytest.mark.parametrize("name, kernels", [r[:2] for r in REAL_WORLD], ids=[r[0] for r in REAL_WORLD])
def test_gpu_real_world_constructs_match_numba(name, kernels):
    result = verify(F / name, device="cuda", dists=("uniform", "negative", "limits"))
    assert result.verdict == "EQUIVALENT", [c.problems for c in result.cases if c.problems]
    # every kernel judged against Numba itself on the GPU, not only against its example's expected output
    assert {c.kernel for c in result.cases if c.reference.startswith("Numba original")} == kernels


@pytest.mark.gpu
def test_gpu_an_original_that_breaks_the_cuda_context_drops_only_its_case(tmp_path):
    """An out-of-bounds write of the original leaves its process's CUDA context unusable: every later launch
    there failed too, so every later case was dropped as 'the original fails on them' and a verdict could rest
    on no comparison with Numba at all. The reference now resumes in a new process after such a case."""
    path = tmp_path / "wild.py"
    path.write_text(textwrap.dedent("""
        import numpy as np
        from numba import cuda

        @cuda.jit("void(float64[::1], float64[::1])")
        def wild(x, out):
            i = cuda.grid(1)
            if i < x.shape[0]:
                if x[0] < 0 and x[1] < 0 and x[2] < 0 and x[3] < 0 and x[4] < 0 and x[5] < 0:
                    out[i + (1 << 36)] = 1.0  # far outside (all-negative inputs only): the GPU faults
                out[i] = x[i] * 2.0

        def example(rng, size="small"):
            x = rng.uniform(0.0, 1.0, 64)
            return dict(kernel=wild, griddim=2, blockdim=32, args=[x, np.zeros(64)], expected={1: x * 2.0})
    """))
    result = verify(path, device="cuda", seeds=2, dists=("negative", "large", "uniform"))
    assert result.verdict == "EQUIVALENT", [c.problems for c in result.cases if c.problems]
    judged = [c.distribution for c in result.cases if c.reference.startswith("Numba original")]
    # redraws run for the first seed: its negative case faults; large and uniform after it are judged
    assert sorted(judged) == ["example", "example", "large", "uniform"], (judged, result.dropped)


@pytest.mark.needs("g++")
def test_a_module_of_a_package_runs_with_its_relative_imports(tmp_path, capsys):
    """verify imports the original as Python does (`pkg.kern`), so `from .helpers import weight` works there
    too; the translation reads weight from helpers.py."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text("import math\nfrom numba import cuda\n\n\n@cuda.jit(device=True)\n"
                                    "def weight(x):\n    return math.exp(-x * x) * 2.0\n")
    (pkg / "kern.py").write_text(
        "import numpy as np\nfrom numba import cuda\nfrom .helpers import weight\n\n\n"
        "@cuda.jit(\"void(float64[::1], float64[::1])\")\ndef apply(a, out):\n    i = cuda.grid(1)\n"
        "    if i < a.size:\n        out[i] = weight(a[i])\n\n\n"
        "def example(rng, size=\"small\"):\n    a = rng.standard_normal(100)\n"
        "    return dict(kernel=apply, griddim=1, blockdim=128, args=[a, np.zeros_like(a)],\n"
        "                expected={1: np.exp(-a * a) * 2.0})\n")
    rc, out = run_cli(capsys, pkg / "kern.py", "--seeds", "1", "--json", "-")
    assert rc == 0, out
    data = json.loads(out[out.index("{"):out.rindex("}") + 1])
    assert data["verdict"] == "EQUIVALENT"
    assert all(c["reference"] == "Numba original in the CUDA simulator" for c in data["cases"]), data["cases"]


def test_the_simulators_reductions_add_as_numba_cuda_does():
    """NumPy sums a float32 array pairwise; numba-cuda adds its elements one by one in float32, and its mean
    divides that sum in float64. The simulator's reference (sim_reduce.py) computes numba-cuda's way: on this
    array NumPy's own np.sum differs from it, so a reference left to NumPy would fail a right translation."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("sim_reduce", Path(__file__).parent.parent / "translator" /
                                                  "verify" / "sim_reduce.py")
    sim = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sim)
    np_ = sim.NumpyModule()
    a = np.random.default_rng(0).uniform(-1.0, 1.0, 40).astype(np.float32)
    c = np.float32(0)
    for v in a:
        c = np.float32(c + v)
    assert np_.sum(a) == c and np_.sum(a).dtype == np.float32 and np.sum(a) != c
    assert np_.mean(a) == np.float64(c) / 40 and np_.sum(a.astype(np.int8)).dtype == np.int64
    with_nan = np.array([np.nan, 2.0, -1.0, np.nan, 5.0])
    assert np.isnan(np_.max(with_nan)) and np_.nanmax(with_nan) == 5.0 and np_.nanmin(with_nan) == -1.0
    assert np_.method(a, "sum") == c and np_.sum(a, axis=0) == np.sum(a, axis=0)  # axis=: NumPy's own


@pytest.mark.needs("g++")
def test_math_floor_as_pythons_int_and_uint64_compared_as_int64_are_rejected():
    """numba-cuda's math.floor of a float32 is a float32, and a uint64 meets an int64 as float64. The old
    translations, the floor through int64 (wrong past 2**63, and its product in double) and the uint64 cast to
    int64 (2**63 + 5 >= 5 false), are caught against Numba's reference."""
    path = F / "real_world_constructs_12.py"
    text = translation(path)
    floor, compare = "float f = floorf(x[i]);", "if ((double)starts[i] >= 5) {"
    assert text.count(floor) == 1 and text.count(compare) == 1, text
    wrong = text.replace(floor, "int64_t f = (int64_t)floorf(x[i]);")
    assert verify(path, kernel="math_types", cu_text=wrong, dists=("specials",)).verdict == "NOT EQUIVALENT"
    wrong = text.replace(compare, "if ((int64_t)starts[i] >= 5) {")
    assert verify(path, kernel="offsets", cu_text=wrong, dists=()).verdict == "NOT EQUIVALENT"


@pytest.mark.needs("g++")
def test_a_transpose_read_in_the_arrays_own_order_is_rejected():
    """`a.T` (an fMRI toolkit's outer products) is `a` read column-major; the same read row-major, what a
    translation that dropped the transpose would do, is caught."""
    path = F / "real_world_constructs_11.py"
    text = translation(path)
    right = "at[j * a_shape1 + i]"
    assert text.count(right) == 1, text
    rejected = verify(path, kernel="transposed", cu_text=text.replace(right, "at[i * a_shape0 + j]"), dists=())
    assert rejected.verdict == "NOT EQUIVALENT"


@pytest.mark.needs("g++")
def test_a_chained_assignment_evaluated_once_per_target_is_rejected():
    """`a[i] = v = a[i] + 1.0` was `a[i] += 1.0; double v = a[i] + 1.0;`: the value evaluated again after the first
    target changed what it reads (and a random draw drawn twice). That translation is caught."""
    path = F / "real_world_constructs_11.py"
    text = translation(path)
    assert text.count("double v = a[i] + 1.0;") == 1 and text.count("a[i] = v;") == 1, text
    # the old order of evaluation: a[i] incremented, then v computed again from the new a[i]
    wrong = text.replace("double v = a[i] + 1.0;", "double v = a[i] += 1.0;").replace("a[i] = v;", "v = a[i] + 1.0;")
    rejected = verify(path, kernel="chained", cu_text=wrong, dists=())
    assert rejected.verdict == "NOT EQUIVALENT"


@pytest.mark.needs("g++")
def test_string_tags_compared_as_other_strings_are_rejected():
    """A ray tracer's `hit == "light"`: each literal is the number its bytes spell. The test given the other tag's
    number, what a translation that numbered literals per function could print, is caught."""
    path = F / "real_world_constructs_11.py"
    text = translation(path)
    light, tri = "0x6c69676874ull", "0x747269ull"
    assert f"if (hit == {light})" in text and f"hit != {tri}" in text, text
    wrong = text.replace(f"if (hit == {light})", f"if (hit == {tri})")
    rejected = verify(path, kernel="tagged", cu_text=wrong, dists=())
    assert rejected.verdict == "NOT EQUIVALENT"


@pytest.mark.needs("g++")
def test_a_none_cast_to_a_number_ends_the_thread_in_the_reference_too():
    """A may-be-None result stored as a float: Numba's cast raises and the GPU thread ends; the simulator stored NaN
    and went on, so the faithful translation (the thread stops) was judged against NaN. The reference now ends that
    thread too. A translation that takes None for 0.0, and one whose thread stops before an unrelated write (the
    runs then differ only where each left its pre-fill: not an order the original depends on), are rejected."""
    path = F / "real_world_constructs_13.py"
    text = translation(path)
    none, hit = "return {0.0, false};", "hit[i] = 1;"
    assert text.count(none) == 1 and text.count(hit) == 1, text
    assert verify(path, kernel="lookup", dists=()).verdict == "EQUIVALENT"
    as_zero = verify(path, kernel="lookup", cu_text=text.replace(none, "return {0.0, true};"), dists=())
    assert as_zero.verdict == "NOT EQUIVALENT"
    stops = verify(path, kernel="lookup", cu_text=text.replace(hit, "if (xs[i] > 0.5) return;\n        " + hit),
                   dists=())
    assert stops.verdict == "NOT EQUIVALENT"
    assert any("leaves elements unwritten that the original writes" in p for c in stops.cases for p in c.problems)


def test_the_value_of_an_atomic_is_read_not_written():
    """`cuda.atomic.add(out, i % 4, x[i])`: only `out` is written. `x` was counted written (and atomic), so verify
    compared it as an output with a float-atomic budget (a transit search's flux array, realworld40)."""
    from translator.frontend.module import parse_source
    from translator.lower.program import Options, build_program
    from translator.verify.facts import kernel_facts

    src = textwrap.dedent('''
        from numba import cuda

        @cuda.jit("void(float32[::1], float32[::1])")
        def acc(x, out):
            i = cuda.grid(1)
            if i < x.size:
                cuda.atomic.add(out, i % 4, x[i])
    ''')
    facts = kernel_facts(build_program(parse_source(src, "acc.py"), Options()).kernels[0])
    assert facts.written == {1} and facts.atomic == {1} and facts.read == {0, 1}


def test_a_draw_writes_the_states_it_advances(tmp_path, capsys):
    """A fire simulation's transport kernel draws from xoroshiro128p states its example() passed without saying
    they change: the draws were read as reads only, so verify called the states a read-only input the translation
    modified (NOT EQUIVALENT) where Numba's draws advance them just the same."""
    from translator.cli import main
    from translator.frontend.module import parse_source
    from translator.lower.program import Options, build_program
    from translator.verify.facts import kernel_facts

    src = textwrap.dedent('''
        import numpy as np
        from numba import cuda
        from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32


        @cuda.jit("void(float32[::1], xoroshiro128p_type[::1], float32)")
        def jitter(x, states, scale):
            i = cuda.grid(1)
            if i < x.size:
                x[i] += scale * xoroshiro128p_uniform_float32(states, i)


        def example(rng, size="small"):
            n = 64
            states = create_xoroshiro128p_states(n, seed=3).copy_to_host()
            x = rng.standard_normal(n).astype(np.float32)
            return dict(kernel=jitter, griddim=2, blockdim=32, args=[x, states, np.float32(0.5)], expected={})
    ''')
    facts = kernel_facts(build_program(parse_source(src, "jitter.py"), Options()).kernels[0])
    assert facts.written == {0, 1} and facts.read == {0, 1}
    path = tmp_path / "jitter.py"
    path.write_text(src)
    rc = main(["verify", str(path), "--device", "cpu", "--dists", "none"])
    out = capsys.readouterr()
    assert rc == 0, out.out + out.err
    assert "states (arg 1)" in out.out and "verdict: EQUIVALENT" in out.out + out.err


def test_an_atomic_on_a_part_of_complex_elements_writes_the_array():
    """fbpic's deposition adds into `rho.real` and `rho.imag` with atomics: the complex-part address hid the
    array, so verify said the translation modified a read-only input, and gave the sums no float-atomic budget."""
    from translator.frontend.module import parse_source
    from translator.lower.program import Options, build_program
    from translator.verify.facts import kernel_facts

    src = textwrap.dedent('''
        from numba import cuda

        @cuda.jit("void(float64[::1], complex128[::1])")
        def deposit(w, rho):
            i = cuda.grid(1)
            if i < w.size:
                cuda.atomic.add(rho.real, i % 3, w[i])
                cuda.atomic.add(rho.imag, i % 3, -w[i])
    ''')
    facts = kernel_facts(build_program(parse_source(src, "deposit.py"), Options()).kernels[0])
    assert facts.written == {1} and facts.atomic == {1} and facts.float_atomic == {1}
