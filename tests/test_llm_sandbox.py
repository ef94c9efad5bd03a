"""The LLM backend's defences, piece by piece: the lexer reads code as the compiler does, the host names come from
the real headers, the confined child cannot write or start anything, the key is redacted wherever it hides, the
cache keeps only real answers, the prompt's fences hold, a kernel's printf stays in its child, and load() and
package reach the model as the command line does."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import numba2cuda
from llm_server import ScriptedServer
from translator.cli import main
from translator.frontend.module import parse_source
from translator.llm.check import check_code
from translator.llm.facts import make_job, reserved_names
from translator.llm.lexer import lex
from translator.llm.names import RUNTIME_INTRINSICS, host_names, refusal
from translator.llm.prompts import first_messages, fence
from translator.llm.redact import PLACEHOLDER, redact
from translator.lower.program import Options
from translator.lower.shells import assemble, rejected_kernels
from translator.runtime import dropin
from translator.runtime.cpurun import HEADER

ROOT = Path(__file__).resolve().parent.parent
KERNEL = ROOT / "kernels" / "exponent_histogram.py"
FIXTURES = Path(__file__).resolve().parent / "llm_fixtures" / "exponent_histogram"
COMMITTED_CACHE = Path(__file__).resolve().parent / "llm_cache"
MODEL = "scripted-fixture"
KEY = "sk-n2c-sandbox-7d0e4b1a93c2f865-not-to-be-kept"
SIGNATURE = ("__global__ void exponent_histogram(const float *x, int64_t x_shape0, float *mantissa, "
             "int64_t mantissa_shape0, int *hist, int64_t hist_shape0)")


def correct_code() -> str:
    return (FIXTURES / "correct.md").read_text().split("```cuda\n")[1].split("```")[0]


def fenced(code: str) -> str:
    return f"```cuda\n{code}\n```"


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path_factory):
    monkeypatch.setenv("NUMBA2CUDA_CACHE", str(tmp_path_factory.getbasetemp() / "n2c-cache"))
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


def translate(url, tmp_path, *extra) -> tuple[int, str]:
    rc = main(["translate", str(KERNEL), "-o", str(tmp_path / "out.cu"), "--backend", "llm", "--model", MODEL,
               "--base-url", url, "--llm-cache", str(tmp_path / "llm-cache"), *map(str, extra)])
    return rc


# ------------------------------------------------------------------ the lexer and the names


@pytest.mark.parametrize("code", ["#pragma unroll\n", "#pragma unroll 4\n", "  # pragma unroll (8) // why\n",
                                  "#pragma nounroll\n"])
def test_pragma_unroll_lines_are_the_only_directives(code):
    lexed = lex(code + "int a;\n")
    assert lexed.problems == [] and lexed.tokens[0].kind == "pragma"


@pytest.mark.parametrize("code, problem", [
    ("#pragma unroll /* x */ 4\n", "directive '#pragma unroll /* x */ 4'"),
    ("#pragma omp parallel for\n", "directive '#pragma omp parallel for'"),
    ("int a; #define X\n", "'#' is not allowed outside a #pragma unroll line"),
    ("int a = b ??- c;\n", "trigraphs"),
    ("int a; // end \\  \nint b;\n", "line continuations"),
    ('const char *s = "a\\\nb";\n', "line continuations"),
    ("int \\u0061sm;\n", "a backslash outside a string literal"),
    ("int a<:1:>;\n", "digraphs ('<:' for '[')"),
    ("int a; /* never closed\n", "never closed"),
    ('auto s = LR"(x)";\n', "string literals with a prefix"),
    ("int a = 1'000;\nint b = 'x'_u;\n", "a literal with a suffix"),
    ("int café = 1;\n", "the identifier 'caf' continues with 'é'"),
    ("int a;\r\nint b;\rint c;\n", "the control character '\\r'"),
])
def test_the_lexer_refuses_what_the_compiler_could_read_otherwise(code, problem):
    assert any(problem in p for p in lex(code).problems), lex(code).problems


def test_a_template_argument_list_after_less_than_colon_colon_is_not_a_digraph():
    toks = [t.text for t in lex("a<::b> c;").tokens]
    assert toks == ["a", "<", "::", "b", ">", "c", ";"] and lex("a<::b> c;").problems == []


@pytest.mark.needs("g++")
def test_host_names_come_from_the_headers_the_file_includes():
    host = host_names()
    for name in ("system", "fopen", "mmap", "mprotect", "getenv", "popen", "remove", "dl_iterate_phdr",
                 "n2c_cpu_release", "stdout"):
        assert name in host, name
        assert refusal(name, host), name
    for name in ("expf", "frexpf", "sqrt", "printf", "min", "atomicAdd", "INFINITY", "FLT_MAX", "int64_t"):
        assert refusal(name, host) is None, name
    for name in ("i", "x", "tid", "acc", "T", "value", "result"):  # names a kernel uses are not host names
        assert name not in host or refusal(name, host) is None, name


@pytest.mark.needs("g++")
def test_host_names_do_not_read_dev_null(tmp_path, monkeypatch):
    """CI's /dev/null is a regular file: g++ -E read pytest's progress dots from it, and an answer's local 's'
    became a host library name (the compile-bomb red-team tests failed in 3 of 4 CI runs)."""
    from translator.llm import names

    stale = tmp_path / "null"
    stale.write_text("int s, planted_in_dev_null;\n")
    monkeypatch.setattr(os, "devnull", str(stale))
    monkeypatch.setattr(names, "_HOST_NAMES", {})
    host = host_names()
    assert "fopen" in host and "planted_in_dev_null" not in host and "s" not in host


@pytest.mark.needs("g++")
def test_a_failed_read_of_host_names_is_not_kept(monkeypatch):
    from translator.llm import names

    monkeypatch.setattr(names, "_HOST_NAMES", {})
    assert host_names("/nonexistent/g++") == frozenset()
    assert "/nonexistent/g++" not in names._HOST_NAMES
    assert "fopen" in host_names()


def test_runtime_intrinsics_are_those_the_cpu_runtime_defines():
    header = HEADER.read_text()
    missing = [n for n in sorted(RUNTIME_INTRINSICS) if n not in header]
    assert not missing, f"names.RUNTIME_INTRINSICS lists what runtime/n2c_cpu.h does not define: {missing}"


def test_an_answers_own_extern_shared_array_names_the_convention():
    code = correct_code().replace("{\n", "{\n    extern __shared__ float scratch[];\n", 1)
    (problem,) = check_code(code, SIGNATURE, set(), {"EMIN", "NBINS"})
    assert "n2c_dynamic_smem" in problem and "reinterpret_cast<float *>(n2c_dynamic_smem)" in problem
    assert "n2c::dynamic_smem_bytes()" in problem


def test_dynamic_shared_memory_by_the_convention_builds_and_runs(tmp_path):
    """An answer using n2c_dynamic_smem and an n2c:: helper passes the allow-list, and the file declares both."""
    from translator.llm.backend import answer_header, helpers_called

    code = correct_code().replace(
        "        mantissa[i] = m;  // exponent_histogram.py:31",
        "        float *stage = reinterpret_cast<float *>(n2c_dynamic_smem);\n"
        "        stage[threadIdx.x % 4] = m;\n        mantissa[i] = stage[threadIdx.x % 4] + "
        "(float)n2c::floordiv((int64_t)0, (int64_t)n2c::dynamic_smem_bytes() + 1);")
    assert check_code(code, SIGNATURE, set(), {"EMIN", "NBINS"}) == []
    assert helpers_called(code) == {"floordiv", "dynamic_smem_bytes"}
    info = parse_source(KERNEL.read_text(), str(KERNEL))
    rejected = rejected_kernels(info, Options())
    _, shells = assemble(info, Options(), rejected)
    job = make_job(info, shells[0], Options(), rejected["exponent_histogram"], set())
    assert "extern __shared__ __align__(16) unsigned char n2c_dynamic_smem[];" in answer_header("k.py", job, "m", code)


# ------------------------------------------------------------------ the confined child


CONFINED = """
import os, sys, threading
from translator.confine import confine
assert confine()
try:
    open(sys.argv[1], "w")
    print("WROTE")
except PermissionError:
    print("write refused")
print("read", len(open("/proc/self/status").read()) > 0)
try:
    os.kill(os.getppid(), 0)
    print("SIGNALLED THE PARENT")
except PermissionError:
    print("signal refused")
t = threading.Thread(target=lambda: print("thread ran")); t.start(); t.join()
sys.stdout.flush()
os.system("touch " + sys.argv[1])
print("STARTED A PROGRAM")
"""


def test_a_confined_process_cannot_write_signal_or_start_programs(tmp_path):
    target = tmp_path / "written"
    proc = subprocess.run([sys.executable, "-c", CONFINED, str(target)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert proc.stdout.split("\n")[:4] == ["write refused", "read True", "signal refused", "thread ran"], proc.stderr
    assert proc.returncode == -31  # SIGSYS: os.system's fork
    assert "STARTED A PROGRAM" not in proc.stdout and not target.exists()


# ------------------------------------------------------------------ the key


def test_the_key_is_redacted_wherever_it_hides():
    assert redact(f"a {KEY} b", KEY) == f"a {PLACEHOLDER} b"
    assert KEY[5:30] not in redact(f"// {KEY[:25]}\\\n{KEY[25:]}", KEY)  # cut by a line splice
    halves = redact(f"// {KEY[:22]}\n// {KEY[22:]}\n", KEY)
    assert KEY[:22] not in halves and KEY[22:] not in halves and halves.count(PLACEHOLDER) == 2
    spaced = redact(" ".join(KEY), KEY)
    assert spaced == PLACEHOLDER
    assert redact("ordinary text", KEY) == "ordinary text" and redact("x", "k") == "x"


@pytest.mark.needs("g++")
def test_an_answer_echoing_the_key_is_redacted_before_anything_keeps_it(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    code = correct_code().replace("// exponent_histogram.py:28", f"// exponent_histogram.py:28 ({KEY})")
    with ScriptedServer([{"content": f"Your key {KEY[:20]}...{KEY[20:]} works.\n" + fenced(code)}]) as server:
        assert translate(server.base_url, tmp_path) == 0
    assert f"({PLACEHOLDER})" in (tmp_path / "out.cu").read_text()
    for root in (tmp_path, Path(os.environ["NUMBA2CUDA_CACHE"])):
        for f in root.rglob("*"):
            if f.is_file():
                assert KEY[:14].encode() not in f.read_bytes() and KEY[-14:].encode() not in f.read_bytes(), f


# ------------------------------------------------------------------ the cache


def test_empty_answers_and_transport_failures_are_never_cached(tmp_path):
    script = [{"content": ""}, {"status": 500, "body": "{}"}, {"status": 500, "body": "{}"},
              {"status": 500, "body": "{}"}]
    with ScriptedServer(script) as server:
        assert translate(server.base_url, tmp_path, "--llm-attempts", "1") == 1
        assert translate(server.base_url, tmp_path, "--llm-attempts", "1") == 1  # asked again, not replayed
    assert len(server.requests) == 4
    assert not list((tmp_path / "llm-cache").rglob("*.json"))


@pytest.mark.needs("g++")
def test_refresh_asks_again_and_replaces_the_cached_answer(tmp_path):
    wrong = (FIXTURES / "wrong.md").read_text()
    with ScriptedServer([{"content": wrong}]) as server:
        assert translate(server.base_url, tmp_path, "--llm-attempts", "1") == 1
    (entry,) = (tmp_path / "llm-cache").rglob("*.json")
    assert json.loads(entry.read_text())["answer"]["content"] == wrong
    with ScriptedServer([{"content": (FIXTURES / "correct.md").read_text()}]) as server:
        assert translate(server.base_url, tmp_path, "--llm-attempts", "1", "--refresh") == 0
    assert len(server.requests) == 1  # asked although the cache had an answer
    assert json.loads(entry.read_text())["answer"]["content"] == (FIXTURES / "correct.md").read_text()
    assert main(["translate", str(KERNEL), "--replay", "--refresh", "--model", MODEL]) == 2


# ------------------------------------------------------------------ prompts


def test_a_fence_in_a_docstring_does_not_close_the_prompts_block(tmp_path):
    source = KERNEL.read_text().replace(
        "    i = cuda.grid(1)\n", '    """Like ```python\n    frexp(x)\n    ``` says."""\n    i = cuda.grid(1)\n', 1)
    info = parse_source(source, str(tmp_path / "exponent_histogram.py"))
    rejected = rejected_kernels(info, Options())
    program, shells = assemble(info, Options(), rejected)
    job = make_job(info, shells[0], Options(), rejected["exponent_histogram"], reserved_names(program))
    prompt = first_messages(job.facts)[1]["content"]
    assert fence("a ``` b") == "````" and fence("plain") == "```"
    block = prompt.split("````python\n", 1)[1].split("\n````\n", 1)[0]
    assert "``` says." in block and "cuda.atomic.add(hist, b, 1)" in block


def test_the_prompt_states_the_conventions_and_the_tolerance():
    info = parse_source(KERNEL.read_text(), str(KERNEL))
    rejected = rejected_kernels(info, Options())
    program, shells = assemble(info, Options(), rejected)
    job = make_job(info, shells[0], Options(), rejected["exponent_histogram"], reserved_names(program))
    system = first_messages(job.facts)[0]["content"]
    for needed in ("n2c_dynamic_smem", "Never declare your own `extern __shared__` array", "n2c::floordiv(T a, T b)",
                   "tuples and arrays are not", "The CPU runtime implements this subset", "__shfl_down_sync",
                   "not: textures", "every output exactly (example() gives rtol=0, atol=0)"):
        assert needed in system, needed


# ------------------------------------------------------------------ the kernel's output, load(), package


@pytest.mark.needs("g++")
def test_a_kernels_printf_never_mixes_into_translate_stdout(tmp_path, capfd):
    code = correct_code().replace("        mantissa[i] = m;", '        mantissa[i] = m;\n'
                                  '        if (i == 0) printf("%s%d\\n", "kernel-says-", 4242);')
    with ScriptedServer([{"content": fenced(code)}]) as server:
        capfd.readouterr()
        rc = main(["translate", str(KERNEL), "-o", "-", "--backend", "llm", "--model", MODEL, "--base-url",
                   server.base_url, "--llm-cache", str(tmp_path / "llm-cache")])
    out, err = capfd.readouterr()
    assert rc == 0, err
    assert out.startswith("// Generated by numba2cuda") and out.rstrip().endswith("}")
    assert "kernel-says-4242" not in out + err


@pytest.mark.needs("g++")
def test_load_reaches_the_model_as_the_command_line_does(monkeypatch):
    calls = []
    monkeypatch.setattr(dropin, "load", lambda path, **kw: calls.append(kw) or "module")
    assert numba2cuda.load(KERNEL, backend="llm", model=MODEL, llm_cache=COMMITTED_CACHE, replay=True,
                           progress=False) == "module"
    assert "frexpf(x[i], &e)" in calls[0]["cu_text"] and "written by the model scripted-fixture" in calls[0]["cu_text"]
    numba2cuda.load(ROOT / "kernels" / "softmax.py", progress=False)  # auto: the rules translate it alone
    assert calls[1].get("cu_text") is None
    with pytest.raises(Exception, match="no answer for request"):
        numba2cuda.load(KERNEL, backend="llm", model=MODEL, llm_cache=ROOT / "nonexistent-cache", replay=True,
                        progress=False)


@pytest.mark.needs("g++")
def test_a_packages_build_info_records_the_model_and_its_answer(tmp_path):
    rc = main(["package", str(KERNEL), "-o", str(tmp_path / "pkg"), "--backend", "llm", "--model", MODEL,
               "--llm-cache", str(COMMITTED_CACHE), "--replay"])
    assert rc == 0
    info: dict = {}
    exec((tmp_path / "pkg" / "exponent_histogram_cuda" / "_build_info.py").read_text(), info)
    (entry,) = COMMITTED_CACHE.rglob("*.json")
    content = json.loads(entry.read_text())["answer"]["content"]
    assert info["TRANSLATED_BY"] == "llm" and info["MODEL"] == MODEL and info["PROMPT_VERSION"] == "2"
    assert info["LLM_ANSWERS"] == {"exponent_histogram": hashlib.sha256(content.encode()).hexdigest()}
    rc = main(["package", str(ROOT / "kernels" / "softmax.py"), "-o", str(tmp_path / "rules")])
    info = {}
    exec((tmp_path / "rules" / "softmax_cuda" / "_build_info.py").read_text(), info)
    assert rc == 0 and info["TRANSLATED_BY"] == "rules" and info["MODEL"] is None and info["LLM_ANSWERS"] == {}


def test_the_budget_stops_numba2cuda_own_work_too():
    """A command's alarm: whatever the parent is doing when the budget ends (here: sleeping), it stops."""
    import time

    from translator.llm.client import Budget, BudgetSpent, hard_deadline

    t0 = time.monotonic()
    with pytest.raises(BudgetSpent):
        with hard_deadline(Budget(1.0)):
            time.sleep(10)
    assert time.monotonic() - t0 < 1.5
    with hard_deadline(Budget(5.0)):  # disarmed on the way out: nothing fires later
        pass
    time.sleep(0.1)


@pytest.mark.gpu
def test_load_with_the_llm_backend_runs_the_verified_kernel_on_the_gpu():
    """numba2cuda.load(backend="llm") from the committed recording: built with nvcc, launched like Numba's kernel,
    the same mantissas and histogram as the module's NumPy reference."""
    import numpy as np
    import torch
    from corpus_harness import load_module

    mod = numba2cuda.load(KERNEL, backend="llm", model=MODEL, llm_cache=COMMITTED_CACHE, replay=True, progress=False)
    rng = np.random.default_rng(0)
    x = (rng.choice([-1.0, 1.0], 1000) * np.exp2(rng.uniform(-30, 30, 1000))).astype(np.float32)
    mantissa = torch.zeros(1000, dtype=torch.float32, device="cuda")
    hist = torch.zeros(48, dtype=torch.int32, device="cuda")
    mod.exponent_histogram[(1000 + 127) // 128, 128](torch.from_numpy(x).cuda(), mantissa, hist)
    torch.cuda.synchronize()
    expected_m, expected_hist = load_module(str(KERNEL)).reference(x)
    assert np.array_equal(mantissa.cpu().numpy(), expected_m)
    assert np.array_equal(hist.cpu().numpy(), expected_hist)
