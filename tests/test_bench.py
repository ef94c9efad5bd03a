"""`numba2cuda bench` (issue 7): every rule on the CPU with fake variants and a fake timer; the GPU path is marked gpu.

The fakes stand in for translator/bench/cuda.py: a Variant's launch/outputs callables and a timer with
device_us / end_to_end_us / enqueue_us / sync. What is checked, what is timed, the statistics, autotune,
the tuning file, kernel.tuned(), the reports and the BENCHMARKS.md section all run here without a GPU.
"""

import importlib.util
import json
import shutil
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from translator.bench import cli as bench_cli
from translator.bench import report as bench_report
from translator.bench.case import Case, Variant, gate, param_combos, params_key, run_case, tuning_table
from translator.bench.stats import Sampling, geomean, pick_fastest, ratio, sample_until_stable, summary, throughput
from translator.cli import main
from translator.runtime.tuning import merge_tuning, read_tuning, tuning_path, write_tuning

ROOT = Path(__file__).resolve().parent.parent
FAST = Sampling(min_samples=6, batch=3, max_seconds=5.0)


# --------------------------------------------------------------------------- statistics

def test_summary_gives_median_and_quartiles():
    s = summary([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s["median_us"], s["q1_us"], s["q3_us"], s["min_us"], s["max_us"], s["n"]) == (3.0, 2.0, 4.0, 1.0, 5.0, 5)
    assert summary([7.0])["q1_us"] == summary([7.0])["q3_us"] == 7.0
    assert summary([])["median_us"] is None


def test_sampling_stops_once_medians_settle_after_the_minimum():
    samples, stable = sample_until_stable(["a", "b"], lambda n: {"a": 10.0, "b": 20.0}[n], FAST)
    assert stable and len(samples["a"]) == len(samples["b"]) == 6  # 2 batches of 3: the minimum, then stable


def test_sampling_goes_on_while_a_median_drifts_then_stops_at_the_time_cap():
    calls = {"n": 0}

    def drifting(name):
        calls["n"] += 1
        return 10.0 * 1.05 ** calls["n"]  # the median keeps moving by far more than 0.5%

    now = {"t": 0.0}

    def clock():
        now["t"] += 1.0
        return now["t"]

    samples, stable = sample_until_stable(["a"], drifting, Sampling(min_samples=3, batch=3, max_seconds=4.0),
                                          clock=clock)
    assert not stable and len(samples["a"]) == 12  # stopped by the (fake) clock, not by stability


def test_sampling_is_round_robin_with_a_rotating_start():
    order = []
    sample_until_stable(["a", "b", "c"], lambda n: order.append(n) or 1.0, Sampling(min_samples=3, batch=3))
    rounds = [order[i:i + 3] for i in range(0, len(order), 3)]
    assert all(sorted(r) == ["a", "b", "c"] for r in rounds)
    assert [r[0] for r in rounds[:3]] == ["a", "b", "c"]


def test_ratio_carries_the_spread_and_geomean():
    numba = summary([90.0, 95.0, 100.0, 105.0, 110.0])
    fast = summary([45.0, 48.0, 50.0, 52.0, 55.0])
    r = ratio(numba, fast)
    assert r["ratio"] == pytest.approx(2.0) and r["lo"] < 2.0 < r["hi"]
    assert r["lo"] == pytest.approx(numba["q1_us"] / fast["q3_us"])
    assert ratio(numba, None) is None
    assert geomean([2.0, 8.0]) == pytest.approx(4.0) and geomean([None]) is None
    assert throughput(1000.0, flops=2e9, nbytes=4e9) == {"tflops": pytest.approx(2.0), "gbps": pytest.approx(4000.0)}


def test_autotune_picks_the_fastest_and_reports_ties_within_the_spread():
    c = {"translation tw=8": ({"tw": 8}, summary([30.0, 31, 32])),
         "translation tw=16": ({"tw": 16}, summary([20.0, 21, 22])),
         "translation tw=32": ({"tw": 32}, summary([19.0, 20.5, 21.5]))}
    pick = pick_fastest(c)
    assert pick["variant"] == "translation tw=32" and pick["params"] == {"tw": 32}
    assert pick["tied_with"] == ["translation tw=16"]  # their quartile ranges overlap
    assert [r["params"]["tw"] for r in pick["ranking"]] == [32, 16, 8]
    assert pick_fastest({"x": ({}, None)}) is None


def test_param_combos_put_the_default_first():
    assert param_combos({"tw": [8, 16, 32]}, {"tw": 16})[0] == {"tw": 16}
    assert param_combos({"tw": [8, 16, 32]}, {"tw": 7}) == [{"tw": 7}, {"tw": 8}, {"tw": 16}, {"tw": 32}]
    assert param_combos({}, {}) == [{}]
    assert params_key({"tw": 16}) == "tw=16" and params_key({}) == "default"


# --------------------------------------------------------------------------- the gate and a whole case, with fakes

class FakeTimer:
    """Device time per variant name; records what it timed."""

    def __init__(self, times):
        self.times, self.timed = times, set()

    def device_us(self, v):
        self.timed.add(v.name)
        return self.times[v.name]

    def end_to_end_us(self, v):
        host = {"numba": 60.0, "numba-torch": 110.0}.get(v.role, 8.0)  # Numba's host cost is larger
        return self.times[v.name] + host

    def enqueue_us(self, v, count):
        return {"numba": 50.0, "numba-torch": 95.0}.get(v.role, 7.0)

    def sync(self):
        pass


def fake_variant(name, role, result, params=None, key="tw=16", default=True, log=None, fail=False):
    def launch():
        if fail:
            raise RuntimeError("launch failed: too many resources requested")
        if log is not None:
            log.append(name)

    return Variant(name, role, params or {"tw": 16}, key, launch, lambda: {2: result.copy()},
                   specialised=role == "translation" or None, default=default)


def fake_case(wrong=False, log=None):
    expected = np.arange(12, dtype=np.float32).reshape(3, 4)
    bad = expected.copy()
    bad[1, 2] += 1.0
    variants = [
        fake_variant("numba tw=16", "numba", expected, log=log),
        fake_variant("translation tw=16", "translation", expected, log=log),
        fake_variant("translation tw=32", "translation", bad if wrong else expected, {"tw": 32}, "tw=32",
                     default=False, log=log),
        fake_variant("numba tw=32", "numba", expected, {"tw": 32}, "tw=32", default=False, log=log),
        fake_variant("cuBLAS fp32", "reference", expected + 1e-5, {}, log=log),
        fake_variant("numba tw=16 on torch tensors", "numba-torch", expected, log=log),
    ]
    checks = {k: {"expected": {2: expected}, "rtol": 1e-4, "atol": 1e-4} for k in ("tw=16", "tw=32")}
    return Case("matmul_k_numba", "bench", {"tw": 16}, variants, checks, flops=2e9, nbytes=1e8,
                launch={"griddim": [320, 320], "blockdim": [16, 16], "shared": 2048})


TIMES = {"numba tw=16": 9500.0, "translation tw=16": 1630.0, "translation tw=32": 1470.0, "numba tw=32": 8000.0,
         "cuBLAS fp32": 331.0, "numba tw=16 on torch tensors": 9500.0}


def test_gate_passes_correct_variants_bit_identical():
    checked = gate(fake_case())
    assert all(c["ok"] for c in checked.values())
    assert checked["translation tw=16"]["bit_identical"] and checked["translation tw=16"]["vs"] == "numba"
    assert checked["cuBLAS fp32"]["vs"] == "expected" and checked["cuBLAS fp32"]["within_tolerance"]


def test_a_wrong_variant_is_reported_and_never_timed():
    timer = FakeTimer(TIMES)
    result = run_case(fake_case(wrong=True), timer, FAST)
    wrong = next(v for v in result["variants"] if v["name"] == "translation tw=32")
    assert wrong["gate"]["status"] == "mismatch" and "index (1, 2)" in wrong["gate"]["detail"]
    assert wrong["device"] is None and "translation tw=32" not in timer.timed
    assert result["failures"] and "translation tw=32" in result["failures"][0]
    assert {"numba tw=16", "translation tw=16", "cuBLAS fp32"} <= timer.timed


def test_a_configuration_numba_cannot_launch_is_skipped_not_failed():
    case = fake_case()
    case.variants[3] = fake_variant("numba tw=32", "numba", None, {"tw": 32}, "tw=32", default=False, fail=True)
    result = run_case(case, FakeTimer(TIMES), FAST)
    status = {v["name"]: v["gate"]["status"] for v in result["variants"]}
    assert status["translation tw=32"] == "skipped" and status["numba tw=32"] == "error"
    assert not result["failures"]  # only a translation that is wrong, or a baseline that does not run, fails


def test_numba_on_torch_tensors_is_a_second_baseline_for_end_to_end_only():
    case = fake_case()
    expected = case.checks["tw=16"]["expected"][2]
    result = run_case(case, FakeTimer(TIMES), FAST)
    rows = {v["name"]: v for v in result["variants"]}
    assert result["baseline"] == "numba tw=16" and result["torch_baseline"] == "numba tw=16 on torch tensors"
    assert rows["translation tw=16"]["vs_numba_torch_end_to_end"]["ratio"] == pytest.approx(9610 / 1638)
    assert rows["translation tw=16"]["vs_numba_end_to_end"]["ratio"] == pytest.approx(9560 / 1638)
    assert rows["translation tw=16"]["vs_numba_device"]["ratio"] == pytest.approx(9500 / 1630)  # same baseline
    assert rows["numba tw=16 on torch tensors"]["device"] is None  # the baseline's kernel: host cost only
    assert rows["numba tw=16 on torch tensors"]["enqueue_us"] == 95.0
    # Numba's torch path disagreeing with Numba is reported, but it is not a verdict on the translation
    bad = expected.copy()
    bad[0, 0] = -1.0
    case.variants[-1] = fake_variant("numba tw=16 on torch tensors", "numba-torch", bad)
    result = run_case(case, FakeTimer(TIMES), FAST)
    rows = {v["name"]: v for v in result["variants"]}
    assert rows["numba tw=16 on torch tensors"]["gate"]["status"] == "mismatch" and not result["failures"]
    assert "vs_numba_torch_end_to_end" not in rows["translation tw=16"]
    assert "note: numba tw=16 on torch tensors differs from Numba on its own device arrays" in \
        "\n".join(bench_report.case_notes(result, autotune=False))


def test_run_case_reports_ratios_throughput_and_the_autotune_pick():
    log = []
    result = run_case(fake_case(log=log), FakeTimer(TIMES), FAST, warmups=2)
    rows = {v["name"]: v for v in result["variants"]}
    assert result["baseline"] == "numba tw=16" and result["stable"]
    assert rows["translation tw=16"]["vs_numba_device"]["ratio"] == pytest.approx(9500 / 1630)
    assert rows["translation tw=16"]["vs_numba_end_to_end"]["ratio"] == pytest.approx(9560 / 1638)
    assert rows["translation tw=16"]["enqueue_us"] == 7.0 and rows["numba tw=16"]["enqueue_us"] == 50.0
    assert rows["translation tw=32"]["tflops"] == pytest.approx(2e9 / 1470e-6 / 1e12)
    assert result["autotune"]["params"] == {"tw": 32}
    assert tuning_table([result]) == {"matmul_k_numba": {"tw": {"bench": 32}}}
    assert log[:5].count("numba tw=16") == 1  # the checked run, then warm-ups
    json.dumps(result)  # plain data


# --------------------------------------------------------------------------- tuning file, kernel.tuned(), package

def test_tuning_file_merges_and_reads_back(tmp_path):
    path = tuning_path(tmp_path / "matmul.py")
    assert path.name == "matmul.n2c-tune.json" and read_tuning(path) == {}
    write_tuning(path, {"k": {"tw": {"bench": 32}}}, env={"gpu": "X"})
    write_tuning(path, {"k": {"tw": {"4096": 16}}, "j": {"b": {"bench": 8}}})
    assert read_tuning(path) == {"k": {"tw": {"bench": 32, "4096": 16}}, "j": {"b": {"bench": 8}}}
    assert json.loads(path.read_text())["format"] == "numba2cuda-tune/1"
    assert not list(tmp_path.glob(".*.tmp"))
    assert merge_tuning({"k": {"tw": {"a": 1}}}, {"k": {"tw": {"a": 2}}}) == {"k": {"tw": {"a": 2}}}


def test_a_broken_tuning_file_is_ignored_with_a_warning(tmp_path):
    path = tmp_path / "m.n2c-tune.json"
    for text in ("{not json", json.dumps({"kernels": {"k": {"tw": {"bench": "32"}}}})):
        path.write_text(text)
        with pytest.warns(UserWarning, match="ignoring the tuning file"):
            assert read_tuning(path) == {}


torch = pytest.importorskip("torch")


def test_tuned_answers_only_when_asked_and_never_changes_a_passed_value():
    from translator.runtime.launch import Kernel

    calls = []
    params = (("m", "float32[:, ::1]", False, ""), ("n", "float32[:, ::1]", False, ""),
              ("out", "float32[:, ::1]", True, ""), ("tw", "int64", False, "> 0: a tile width"))
    k = Kernel(lambda *a: calls.append(a), "matmul_k_numba", params, tuning={"tw": {"bench": 32, "4096": 32}})
    assert k.tuned("tw", size="bench", default=16) == 32
    assert k.tuned("tw", size="other", default=16) == 16 and k.tuned("bm", default=4) == 4
    assert k.tuned("tw", default=16) == 32  # no size: the value every recorded size agrees on
    m = torch.zeros(2, 2)
    k[1, (8, 8), 0, 512](m, m, m, 8)  # the caller passes tw=8: it stays 8
    assert calls[-1][-1] == 8 and calls[-1][3:5] == (8, 8)
    assert Kernel(None, "k", ()).tuned("tw", "bench", 16) == 16


def test_dropin_module_hands_the_table_to_its_kernels():
    from translator.runtime.dropin import Module, sources

    program, cu, cpp = sources(str(ROOT / "kernels" / "matmul.py"))
    ext = types.SimpleNamespace(matmul_k_numba=lambda *a: None)
    mod = Module("matmul.py", program, ext, cu, cpp, {"matmul_k_numba": {"tw": {"bench": 32}}})
    assert mod.matmul_k_numba.tuned("tw", "bench", 16) == 32 and mod.program is program


def test_package_carries_the_tuning_table(tmp_path):
    from translator.package.project import render_files

    src = tmp_path / "matmul.py"
    shutil.copy(ROOT / "kernels" / "matmul.py", src)
    _, plain = render_files(src, torch_version="2.14.1")
    assert "TUNING = {}" in plain["matmul_cuda/_build_info.py"]
    write_tuning(tuning_path(src), {"matmul_k_numba": {"tw": {"bench": 32}}, "gone": {"x": {"s": 1}}})
    _, files = render_files(src, torch_version="2.14.1")
    info = {}
    exec(compile(files["matmul_cuda/_build_info.py"], "_build_info.py", "exec"), info)
    assert info["TUNING"] == {"matmul_k_numba": {"tw": {"bench": 32}}}  # only kernels the package has
    assert '_build_info.TUNING.get("matmul_k_numba")' in files["matmul_cuda/__init__.py"]
    assert render_files(src, torch_version="2.14.1")[1] == files  # still byte-identical run to run


# --------------------------------------------------------------------------- command line and reports

def test_bench_without_cuda_exits_2_with_a_clear_message(capsys, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main(["bench", str(ROOT / "kernels" / "vector_add.py")]) == 2
    err = capsys.readouterr().err
    assert "no CUDA GPU" in err and "numba2cuda verify" in err


def test_plot_without_matplotlib_exits_2_before_any_gpu_work(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    assert main(["bench", str(ROOT / "kernels" / "vector_add.py"), "--plot", "x.png"]) == 2
    assert "--plot needs matplotlib" in capsys.readouterr().err


def synthetic_doc(wrong=False):
    result = run_case(fake_case(wrong=wrong), FakeTimer(TIMES), FAST)
    env = {"gpu": "NVIDIA H200", "driver": "580.159.04", "cuda": "13.0", "torch": "2.11.0+cu130",
           "numba": "0.68.0", "numba_cuda": "0.30.4", "numpy": "2.4.6", "triton": "3.5.0", "date": "2026-12-03"}
    return {"format": "numba2cuda-bench/1", "module": "kernels/matmul.py", "env": env, "cases": [result],
            "notes": [], "ok": not result["failures"], "command": "numba2cuda bench kernels/matmul.py"}


@pytest.mark.parametrize("use_rich", [False, None])
def test_report_shows_every_variant_and_the_verdict(use_rich):
    text = bench_report.format_report(synthetic_doc(), autotune=True, use_rich=use_rich)
    for needle in ("numba tw=16 (default)", "translation tw=32", "cuBLAS fp32", "bit-identical", "5.83x",
                   "autotune: tw=32 is fastest", "NVIDIA H200", "verdict: every translation variant matches",
                   "vs Numba+torch e2e", "5.87x"):
        assert needle in text, needle
    wrong = bench_report.format_report(synthetic_doc(wrong=True), use_rich=use_rich)
    assert "MISMATCH" in wrong and "1 variant WRONG" in wrong and "(not timed)" in wrong


@pytest.mark.parametrize("use_rich", [False, None])
def test_default_table_fits_120_columns_and_wide_json_and_markdown_have_every_column(use_rich):
    doc = synthetic_doc()
    text = bench_report.format_report(doc, autotune=True, use_rich=use_rich)
    assert max(len(line) for line in text.splitlines()) <= 120, text
    assert "quartiles" not in text and "TFLOP/s" not in text  # detail kept for --wide, JSON and Markdown
    wide = bench_report.format_report(doc, autotune=True, use_rich=use_rich, wide=True)
    assert all(column in wide for column in bench_report.COLUMNS) and "TFLOP/s" in wide
    md = bench_report.format_markdown(doc)
    assert "| " + " | ".join(bench_report.COLUMNS) + " |" in md and "TFLOP/s" in md and "5.83x" in md
    assert "q1_us" in json.dumps(doc) and "enqueue_us" in json.dumps(doc)


def test_plot_renders_from_saved_json(tmp_path):
    pytest.importorskip("matplotlib")
    saved = tmp_path / "r.json"
    saved.write_text(json.dumps(synthetic_doc()))
    assert bench_report.main([str(saved), "--plot", str(tmp_path / "s.png")]) == 0
    assert (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"
    assert [b["label"] for b in bench_report.speedup_bars(synthetic_doc())][0].startswith("matmul_k_numba bench")


def load_run_corpus():
    spec = importlib.util.spec_from_file_location("run_corpus", ROOT / "benchmarks" / "run_corpus.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def synthetic_corpus(second_run_scale=1.01):
    run1 = synthetic_doc()
    run2 = json.loads(json.dumps(run1))
    for v in run2["cases"][0]["variants"]:
        if v.get("device"):
            v["device"]["median_us"] *= second_run_scale
    softmax = json.loads(json.dumps(run1))
    softmax["cases"][0]["size"] = "4096x4096"
    for v, name in zip(softmax["cases"][0]["variants"], ["numba", "translation", "x", "y", "torch.softmax"]):
        v["name"] = name
    return {"format": "numba2cuda-corpus/1", "env": run1["env"], "command": "python3 benchmarks/run_corpus.py",
            "json": "benchmarks/results/x.json",
            "modules": {"matmul": {"runs": [run1, run2]}, "softmax": {"runs": [softmax]}},
            "skipped": {"exponent_histogram": "not translated by the rules"}}


def test_corpus_section_renders_from_json_and_keeps_the_rest_of_the_file(tmp_path):
    rc = load_run_corpus()
    doc = synthetic_corpus()
    md = rc.render_markdown(doc)
    assert md.startswith(rc.START) and md.rstrip().endswith(rc.END)
    for needle in ("NVIDIA H200", "580.159.04", "numba-cuda 0.30.4", "python3 benchmarks/run_corpus.py",
                   "| matmul | bench | 9500.0 | 1630.0 | 5.83x", "Lecture matmul", "cuBLAS fp32",
                   "Autotune: **translation tw=32**", "Block-per-row softmax, 4096x4096", "Two consecutive runs",
                   "1.00%", "exponent_histogram"):
        assert needle in md, needle
    assert "5.87x against Numba called on torch tensors" in md and "5.84x against Numba given its own" in md
    crit = dict((t.split(" (")[0].split(":")[0], ok) for t, ok in rc.criteria(doc))
    assert crit["geometric-mean speedup including host overhead, Numba called as the lecture calls it"] is True
    assert crit["the same against Numba given its own device arrays, made once"] == "info"
    assert crit["matmul"] is True and crit["two consecutive runs agree within 5% on medians over 100 us"] is True
    assert rc.criteria(synthetic_corpus(1.2))[-1][1] is False  # 20% apart: not stable
    slow = synthetic_corpus()
    t = next(v for v in slow["modules"]["matmul"]["runs"][0]["cases"][0]["variants"] if v["name"] == "translation tw=16")
    for (lo, hi), verdict in (((0.95, 0.99), True), ((0.90, 0.96), False)):  # "0.97 within the spread"
        t["vs_numba_device"] = {"ratio": (lo + hi) / 2, "lo": lo, "hi": hi}
        crit = dict((t_.split(":")[0], ok) for t_, ok in rc.criteria(slow))
        assert crit["every corpus kernel"] is verdict
    target = tmp_path / "BENCHMARKS.md"
    target.write_text(f"# Benchmarks\n\nhand-written\n\n{rc.START}\nold\n{rc.END}\n\n## After\n")
    saved = tmp_path / "c.json"
    saved.write_text(json.dumps(doc))
    assert rc.main(["--from-json", str(saved), "--md", str(target)]) == 0
    text = target.read_text()
    assert "hand-written" in text and "## After" in text and "old" not in text and text.count(rc.START) == 1


def test_merging_saved_parts_later_wins():
    rc = load_run_corpus()
    a, b = synthetic_corpus(), synthetic_corpus()
    b["modules"] = {"matmul": {"runs": [], "error": "boom"}}
    merged = rc.merge([a, b])
    assert merged["modules"]["matmul"]["error"] == "boom" and "softmax" in merged["modules"]


# --------------------------------------------------------------------------- on a GPU

@pytest.mark.gpu
@pytest.mark.parametrize("module,size", [("vector_add", "small"), ("matmul", 67),
                                         ("monte_carlo_pi", 1000)])  # record arrays (the RNG states) too
def test_bench_runs_on_the_gpu(module, size, tmp_path):
    from translator.bench.cuda import bench_module

    doc = bench_module(ROOT / "kernels" / f"{module}.py", sizes=[size], sampling=Sampling(min_samples=5, batch=5,
                                                                                          max_seconds=3.0))
    assert doc["ok"], bench_report.format_report(doc)
    case = doc["cases"][0]
    t = next(v for v in case["variants"] if v["role"] == "translation" and v["default"])
    assert t["gate"]["status"] == "ok" and t["device"]["median_us"] > 0 and t["vs_numba_device"]["ratio"] > 0
    assert t["enqueue_us"] > 0 and t["end_to_end"]["median_us"] >= t["device"]["median_us"] * 0.5
    nt = next(v for v in case["variants"] if v["role"] == "numba-torch")
    assert nt["gate"]["status"] == "ok" and nt["enqueue_us"] > 0 and t["vs_numba_torch_end_to_end"]["ratio"] > 0
    if module == "matmul":
        assert case["autotune"] and {"cuBLAS fp32", "cuBLAS TF32"} <= {v["name"] for v in case["variants"]}
        assert any(v["role"] == "generic" for v in case["variants"])
    out = tmp_path / "r.json"
    rc = main(["bench", str(ROOT / "kernels" / f"{module}.py"), "--sizes", str(size), "--min-reps", "5",
               "--max-seconds", "2", "--json", str(out)])
    assert rc == 0 and json.loads(out.read_text())["cases"]


@pytest.mark.gpu
def test_bench_times_a_given_cu_and_the_llm_backends_translation(tmp_path, capsys):
    """--cu: a given .cu is checked then timed, and a wrong one is refused before timing (exit 1);
    --backend llm --replay: the committed model translation of the kernel the rules reject is timed."""
    vec = str(ROOT / "kernels" / "vector_add.py")
    quick = ["--sizes", "small", "--min-reps", "5", "--max-seconds", "2"]
    good = tmp_path / "good.cu"
    assert main(["translate", vec, "-o", str(good)]) == 0
    assert main(["bench", vec, "--cu", str(good), *quick]) == 0
    bad = tmp_path / "bad.cu"
    bad.write_text(good.read_text().replace("out[i] = a[i] + b[i];", "out[i] = a[i] - b[i];"))
    assert bad.read_text() != good.read_text()
    capsys.readouterr()
    assert main(["bench", vec, "--cu", str(bad), *quick]) == 1
    assert "1 variant WRONG" in capsys.readouterr().out
    llm = ["--backend", "llm", "--replay", "--llm-cache", str(ROOT / "tests" / "llm_cache"), "--model",
           "scripted-fixture", "--base-url", "http://127.0.0.1:9/v1"]
    assert main(["bench", str(ROOT / "kernels" / "exponent_histogram.py"), *llm, *quick]) == 0
    assert "exponent_histogram" in capsys.readouterr().out


def test_make_case_plans_every_specialisation_on_the_cpu(monkeypatch):
    """bench_cuda's planning and its variants' plumbing, run on the CPU: torch CPU tensors stand in for CUDA
    ones, and the Numba original and the translation are stood in for by torch.matmul (the translation's
    launch line and the references are the real code)."""
    from translator.bench import cuda as bench_cuda

    monkeypatch.setattr(sys, "path", list(sys.path))  # load_user_module puts kernels/ on it
    monkeypatch.setattr(torch.cuda, "current_stream", lambda: types.SimpleNamespace(cuda_stream=0,
                                                                                    synchronize=lambda: None))
    numba_cuda = pytest.importorskip("numba.cuda")
    monkeypatch.setattr(numba_cuda, "external_stream", lambda handle: f"stream {handle}", raising=False)
    real_device_example = bench_cuda.DeviceExample
    monkeypatch.setattr(bench_cuda, "DeviceExample", lambda ex, t: real_device_example(ex, t, device="cpu"))
    launches = []

    def stand_in(role):  # torch.matmul for the Numba original, logging which launch ran on which stream
        def make(name, kernel, dev, stream, params, key, default=True):
            args = dev.variant_args()
            def launch():
                launches.append((name, stream))
                torch.matmul(args[0], args[1], out=args[2])
            return bench_cuda._variant(name, role, params, key, dev, args, launch, default=default)
        return make

    monkeypatch.setattr(bench_cuda, "numba_variant", stand_in("numba"))
    monkeypatch.setattr(bench_cuda, "numba_torch_variant", stand_in("numba-torch"))

    class Translated:
        param_names = ("m", "n", "out", "tw")

        def __getitem__(self, config):
            grid, block, stream, shared = config
            assert block == (config[1][0], config[1][0]) and shared == block[0] ** 2 * 8 and stream == 0

            def run(m, n, out, tw):
                launches.append(("translation", tw))
                torch.matmul(m, n, out=out)
            return run

    translation = types.SimpleNamespace(kernels={"matmul_k_numba": Translated()})
    user = bench_cuda.load_user_module(str(ROOT / "kernels" / "matmul.py"))
    case = bench_cuda.make_case(user, 40, None, {"tw": [8, 16, 32]}, translation, translation, True, seed=0)
    names = [v.name for v in case.variants]
    assert names == ["numba tw=8", "numba tw=8 on torch tensors", "translation tw=8", "generic kernel tw=8",
                     "cuBLAS fp32", "cuBLAS TF32", "numba tw=16", "translation tw=16", "numba tw=32", "translation tw=32"]
    assert case.defaults == {"tw": 8} and sorted(case.checks) == ["tw=16", "tw=32", "tw=8"]
    assert case.flops == 2 * 40 ** 3 and case.launch["blockdim"] == (8, 8)
    result = run_case(case, CpuTimer(), FAST)
    assert not result["failures"], result["failures"]
    rows = {v["name"]: v for v in result["variants"]}
    assert rows["translation tw=32"]["gate"]["vs"] == "numba" and rows["cuBLAS TF32"]["gate"]["vs"] == "expected"
    assert rows["translation tw=16"]["specialised"] is True and rows["generic kernel tw=8"]["specialised"] is False
    assert rows["numba tw=8 on torch tensors"]["gate"]["vs"] == "numba"  # checked against the same kernel's run
    assert rows["translation tw=8"]["vs_numba_torch_end_to_end"]["ratio"] > 0
    assert result["autotune"]["params"]["tw"] in (8, 16, 32)
    assert ("translation", 32) in launches and ("numba tw=8", "stream 0") in launches
    assert ("numba tw=8 on torch tensors", "stream 0") in launches  # Numba's stream, like the baseline
    json.dumps(result)


class CpuTimer:
    """perf_counter around a CPU 'launch': the shape of CudaTimer, for the plumbing test."""

    def _time(self, v):
        import time

        if v.reset:
            v.reset()
        t0 = time.perf_counter()
        v.launch()
        return (time.perf_counter() - t0) * 1e6

    device_us = end_to_end_us = _time

    def enqueue_us(self, v, count):
        return self._time(v)

    def sync(self):
        pass


def test_cli_writes_json_plot_and_tuning_record(tmp_path, monkeypatch, capsys):
    """cmd_bench's plumbing with the GPU part (bench_module) replaced by a synthetic result."""
    from translator.bench import cuda as bench_cuda

    monkeypatch.setattr(bench_cli, "require_cuda", lambda: None)
    monkeypatch.setattr(bench_cuda, "bench_module", lambda *a, **k: synthetic_doc())
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("matplotlib is not installed")
    out, png, tune = tmp_path / "r.json", tmp_path / "r.png", tmp_path / "t.json"
    rc = main(["bench", str(ROOT / "kernels" / "matmul.py"), "--json", str(out), "--plot", str(png),
               "--record", str(tune)])
    text = capsys.readouterr().out
    assert rc == 0 and "note: bench imports and runs" in text and "autotune: tw=32" in text
    assert json.loads(out.read_text())["command"].startswith("numba2cuda ")
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert read_tuning(tune) == {"matmul_k_numba": {"tw": {"bench": 32}}}
    monkeypatch.setattr(bench_cuda, "bench_module", lambda *a, **k: synthetic_doc(wrong=True))
    assert main(["bench", str(ROOT / "kernels" / "matmul.py")]) == 1  # a wrong variant: exit 1
