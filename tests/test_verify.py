"""`numba2cuda verify`: passes the corpus, rejects planted wrong translations (exit 1, naming the first
differing index), and reports usage/translation errors with exit 2. The checker itself is tested here."""

import json
from pathlib import Path

import numpy as np
import pytest

from translator.cli import main
from translator.compare import compare_arrays
from translator.frontend import parse_file
from translator.lower import Options, build_program
from translator.render import render_program
from translator.testing import assert_equivalent

ROOT = Path(__file__).resolve().parent.parent
K = ROOT / "kernels"


def translation(name):
    path = K / name
    return render_program(build_program(parse_file(str(path)), Options()), path.name)


def run_cli(capsys, *argv):
    rc = main(["verify", *map(str, argv)])
    out = capsys.readouterr()
    return rc, out.out + out.err


@pytest.mark.parametrize("name", ["matmul.py", "softmax.py", "histogram.py", "heat.py"])
def test_verify_passes_corpus(capsys, name):
    rc, text = run_cli(capsys, K / name)
    assert rc == 0, text
    assert "verdict: EQUIVALENT" in text
    assert "seed: 0" in text and "never imports or runs" in text


def test_verify_several_seeds(capsys):
    rc, text = run_cli(capsys, K / "vector_add.py", "--seed", 5, "--seeds", 2)
    assert rc == 0, text
    assert "seeds: 5, 6" in text and "seed 5" in text and "seed 6" in text


# (kernel module, what the mutation plants, old text, new text)
MATMUL_STORE = "out[r * out_shape1 + c] = p;"
PLANTED = [
    ("matmul.py", "no-op body", MATMUL_STORE, ";"),
    ("matmul.py", "skipped tail", "if (r < h && c < w) {", "if (r < h - 1 && c < w) {"),
    ("matmul.py", "missing __syncthreads", "__syncthreads();  // matmul.py:41", ";"),
    ("matmul.py", "wrong tile index", "ns[(int64_t)i * tw + tc]", "ns[(int64_t)i * tw + tr]"),
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
    rc, out = run_cli(capsys, K / name, "--cu", cu)
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
    rc, out = run_cli(capsys, K / "matmul.py", "--cu", cu, "--json", js)
    assert rc == 0, out
    data = json.loads(js.read_text())
    assert data["equivalent"] is True and data["translation"] == str(cu)
    case = data["cases"][0]
    assert case["kernel"] == "matmul_k_numba" and case["seed"] == 0
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
