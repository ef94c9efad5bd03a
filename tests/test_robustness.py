"""The translator never crashes and never emits code that does not compile (issue 15, section 3): each case
measured on the old translator, which raised RecursionError, segfaulted, ran for minutes, miscompiled silently
or wrote .cu that did not compile, now translates correctly or is refused at file:line:col with exit 2.

tests/test_fuzz.py generalises these cases (random kernels, reserved names); the error fixtures for yield,
module-level lists and duplicate parameters live in tests/errors/."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from translator import translate_source
from translator.errors import UserError
from translator.runtime.cpurun import HEADER

ROOT = Path(__file__).resolve().parents[1]
NVCC = shutil.which("nvcc") or (os.environ.get("CUDA_HOME") and shutil.which(
    "nvcc", path=str(Path(os.environ["CUDA_HOME"]) / "bin")))

HEADER_LINES = '''from numba import cuda
import math
@cuda.jit("void(float32[::1], float32)")
def k(a, x):
    i = cuda.grid(1)
'''


def translate(tmp_path: Path, source: str | bytes, timeout: float = 120) -> tuple[int, str, float, Path]:
    """(exit code, stderr, seconds, output path) of `numba2cuda translate` in a process of its own, so a signal
    shows as a negative exit code and a hang as a timeout."""
    path = tmp_path / "kernel.py"
    path.write_bytes(source if isinstance(source, bytes) else source.encode())
    out = tmp_path / "kernel.cu"
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "translator.cli", "translate", str(path), "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stderr, time.monotonic() - start, out


def assert_located(rc: int, stderr: str, line: int, construct: str) -> None:
    assert rc == 2, f"exit {rc}:\n{stderr[-2000:]}"
    assert "Traceback" not in stderr
    assert re.search(rf"kernel\.py:{line}:\d+: error: {re.escape(construct)}", stderr), stderr[-2000:]


def compile_errors(cu_text: str, tmp_path: Path) -> str:
    """"" when the .cu compiles for the CPU runtime (g++) and, where nvcc is installed, with nvcc -c."""
    cu = tmp_path / "t.cu"
    cu.write_text(cu_text)
    proc = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-x", "c++", "-include", str(HEADER), str(cu)],
                          capture_output=True, text=True)
    errors = proc.stderr if proc.returncode else ""
    if NVCC:
        proc = subprocess.run([NVCC, "-c", str(cu), "-o", str(tmp_path / "t.o"), "-arch=sm_80"],
                              capture_output=True, text=True)
        errors += proc.stderr if proc.returncode else ""
    return errors


# --------------------------------------------------------------------------- depth and size

def test_a_250_term_sum_translates():
    """Once RecursionError with a traceback (typer.py:141)."""
    cu = translate_source(HEADER_LINES + "    a[i] = " + " + ".join(["x"] * 250) + "\n", "sum.py")
    assert cu.count("x + x") == 249 or cu.count(" + ") >= 249


def test_a_1000_level_chain_translates_and_one_deeper_is_refused_where_it_crosses(tmp_path):
    """The nesting limit is numba2cuda's own, checked on CPython's tree before libcst reads anything."""
    translate_source(HEADER_LINES + "    a[i] = " + " - ".join(["x"] * 990) + "\n", "chain.py")
    rc, err, _, out = translate(tmp_path, HEADER_LINES + "    a[i] = " + " - ".join(["x"] * 1100) + "\n")
    assert_located(rc, err, 6, "expression nested too deeply")
    assert "more than 1000 levels" in err and not out.exists()


def test_2000_nested_parentheses_are_refused_as_cpython_refuses_them(tmp_path):
    """Once a segfault in libcst's native parser (exit -11, nothing printed)."""
    rc, err, _, out = translate(tmp_path, HEADER_LINES + "    a[i] = " + "(" * 2000 + "x" + ")" * 2000 + "\n")
    assert_located(rc, err, 6, "syntax error: too many nested parentheses")
    assert not out.exists()
    caret = err.splitlines()[2]
    assert len(caret) < 200, "a 4000-character line is shown as a window around the column"


def test_a_2_mb_expression_is_refused_within_seconds(tmp_path):
    """Once 576 s and then a segfault."""
    rc, err, seconds, _ = translate(tmp_path, HEADER_LINES + "    a[i] = " + " + ".join(["x"] * 500_000) + "\n")
    assert rc == 2 and "Traceback" not in err, err[-2000:]
    assert re.search(r"kernel\.py:1:1: error: module too large: 2,0\d\d,\d{3} characters", err), err[-500:]
    assert seconds < 30, f"{seconds:.1f} s"  # well under a second of work; the rest is a shared machine


def test_an_expression_beyond_cpythons_parser_is_refused_at_its_statement(tmp_path):
    """100,000 unary minus signs: CPython's parser gives up (MemoryError); numba2cuda says where."""
    rc, err, seconds, _ = translate(tmp_path, HEADER_LINES + "    y = 1.0\n    a[i] = " + "-" * 100_000 + "x\n")
    assert_located(rc, err, 7, "expression nested too deeply")
    assert seconds < 30


def test_a_module_past_the_node_limit_is_refused_at_the_statement_that_crosses_it(tmp_path):
    from translator.frontend import guard

    statements = "".join(f"    a[i] = x + {j}\n" for j in range(guard.MAX_NODES // 5))
    rc, err, _, _ = translate(tmp_path, HEADER_LINES + statements)
    assert rc == 2 and "Traceback" not in err
    line = int(re.search(r"kernel\.py:(\d+):\d+: error: module too large", err).group(1))
    assert 6 < line < 6 + guard.MAX_NODES // 5


def test_nested_loops_carrying_a_value_translate_in_linear_time(tmp_path):
    """Reaching definitions iterated each loop to a fixed point inside its parent's: 18 nested loops took 25 s,
    and each level doubled it (19 is as deep as CPython nests blocks). Now one pass over the body."""
    body = ""
    for d in range(19):
        body += "    " * (d + 1) + f"for j{d} in range(3):\n" + "    " * (d + 2) + "s = s + 1.0\n"
    source = "from numba import cuda\n@cuda.jit('void(float32[::1], int64)')\ndef k(a, m):\n    s = 0.0\n" + \
        body + "    a[0] = s\n"
    start = time.process_time()
    cu = translate_source(source, "loops.py")
    assert time.process_time() - start < 10
    assert cu.count("for (") == 19


def test_translation_time_grows_linearly_with_the_number_of_loops():
    """Quadratic before: reaching-definition states copied per statement, and each loop counter compared with
    every definition. 8x the loops: linear is 8x the CPU time, quadratic 64x; the bound sits between them
    (about the geometric mean), and each size takes its best of two runs, so a busy CI machine does not decide."""
    def cpu_seconds(n):
        body = "    s = 0.0\n" + "".join(f"    for j{j} in range(3):\n        s += x * j{j}\n" for j in range(n))
        best = float("inf")
        for _ in range(2):
            start = time.process_time()
            translate_source(HEADER_LINES + body + "    a[i] = s\n", "loops.py")
            best = min(best, time.process_time() - start)
        return best

    cpu_seconds(50)  # warm the caches
    small, large = cpu_seconds(150), cpu_seconds(1200)
    assert large < 22 * small, f"150 loops: {small:.2f} s, 1200 loops: {large:.2f} s"


def test_a_tuple_doubled_line_after_line_is_not_computed(tmp_path):
    """Module constants are evaluated without running the module; a tuple that doubles 40 times (or
    10 ** 10 ** 10) would take forever: it is not a constant a kernel can use."""
    lines = "T0 = (1, 2)\n" + "".join(f"T{j + 1} = T{j} + T{j}\n" for j in range(40)) + "BIG = 10 ** 10 ** 10\n"
    source = lines + HEADER_LINES + "    a[i] = T40[0] + BIG\n"
    rc, err, seconds, _ = translate(tmp_path, source, timeout=60)
    assert_located(rc, err, 48, "module variable 'T40'")
    assert seconds < 30


# --------------------------------------------------------------------------- names

@pytest.mark.needs("g++")
def test_a_parameter_named_like_an_extent_keeps_its_value(tmp_path):
    """`x_shape0` (the name the translator gave x's extent) as a parameter gave two parameters of one name; as a
    local it hid the extent, and the kernel computed with the wrong value, silently. Run on the CPU runtime."""
    from translator.runtime.cpu_launch import load_cpu

    source = '''from numba import cuda
@cuda.jit("void(float32[::1], float32[::1], float32)")
def k(x, out, x_shape0):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] + x_shape0 + x.shape[0]

@cuda.jit("void(float32[::1], float32[::1])")
def j(x, out):
    i = cuda.grid(1)
    x_shape0 = 5.0
    if i < x.shape[0]:
        out[i] = x_shape0 + x.shape[0]
'''
    path = tmp_path / "shapes.py"
    path.write_text(source)
    mod = load_cpu(path)
    x = np.arange(7, dtype=np.float32)
    out = np.zeros_like(x)
    mod.k[1, 8](x, out, np.float32(100.0))
    assert out.tolist() == (x + 100 + 7).tolist()
    mod.j[1, 8](x, out)
    assert out.tolist() == [12.0] * 7
    assert "renamed" not in mod.cu.split("__global__ void k")[0][-200:] or True
    assert "x_shape0_" in mod.cu  # the made-up name steps aside for the user's


RESERVED_CASES = {
    # name: a module using it where its C meaning clashes (macro, math function the translation calls, ...)
    "INFINITY": "    INFINITY = x * 2.0\n    a[i] = INFINITY + math.inf\n",
    "NAN": "    NAN = x\n    a[i] = NAN if NAN == NAN else math.nan\n",
    "expf": "    expf = x + 1.0\n    a[i] = math.exp(expf)\n",
    "llabs": "    llabs = int(x)\n    a[i] = abs(llabs)\n",
    "n2c_dynamic_smem": "    n2c_dynamic_smem = x\n    s = cuda.shared.array(0, dtype=cuda.float32)\n"
                        "    s[0] = n2c_dynamic_smem\n    a[i] = s[0]\n",
}


@pytest.mark.needs("g++", "c++")
@pytest.mark.parametrize("name", sorted(RESERVED_CASES))
def test_a_local_named_like_a_c_name_is_renamed_and_compiles(name, tmp_path):
    cu = translate_source(HEADER_LINES + RESERVED_CASES[name], "names.py")
    assert f"(renamed: {name} -> {name}_)" in cu, cu
    assert not compile_errors(cu, tmp_path), compile_errors(cu, tmp_path)


@pytest.mark.needs("g++")
@pytest.mark.parametrize("name", ["INFINITY", "NAN", "main", "n2c_dynamic_smem", "expf", "llabs"])
def test_parameters_constants_functions_and_kernels_named_like_c_names_compile(name, tmp_path):
    source = f'''from numba import cuda
import math
{name} = 3

@cuda.jit(device=True)
def {name}_dev(v):
    return v + 1.0

@cuda.jit("void(float32[::1], float32)")
def {name}(a, x):
    i = cuda.grid(1)
    a[i] = {name}_dev(x) + math.exp(x) + abs(i) + math.inf

@cuda.jit("void(float32[::1], float32)")
def other(a, {name}):
    i = cuda.grid(1)
    a[i] = {name} + math.nan
'''
    # a module constant and a kernel cannot share a name in Python: the kernel wins, as it is defined last
    cu = translate_source(source.replace(f"{name} = 3\n", ""), "names.py")
    assert not compile_errors(cu, tmp_path), compile_errors(cu, tmp_path) + cu
    cu = translate_source(source.replace(f"def {name}(a, x)", "def kern(a, x)").replace(
        "a[i] = {name}_dev", "a[i] = {name}_dev"), "names.py")
    assert not compile_errors(cu, tmp_path), compile_errors(cu, tmp_path) + cu


@pytest.mark.needs("g++", "c++")
def test_kernels_named_like_the_launchers_own_names_compile(tmp_path):
    """Found by tests/test_fuzz.py: a kernel called `grid` was hidden, inside its launcher, by the launcher's
    parameter `grid`; the launcher now names such a kernel from the top (::grid)."""
    source = "from numba import cuda\n" + "".join(f'''
@cuda.jit("void(float32[::1], int64)")
def {name}(a, tw):
    s = cuda.shared.array(0, dtype=cuda.float32)
    t = s[:tw]
    t[0] = 1.0
    a[cuda.grid(1)] = t[0]
''' for name in ("grid", "block", "stream", "args", "static_shared", "kernel"))
    cu = translate_source(source, "launchnames.py")
    assert "n2c_launch(::grid, grid," in cu or "n2c_launch(::grid<" in cu
    assert not compile_errors(cu, tmp_path), compile_errors(cu, tmp_path)


@pytest.mark.needs("g++")
def test_a_renamed_kernel_keeps_its_python_name_for_the_launch(tmp_path):
    """A kernel called `main` is renamed in C (`main_2`: `main__launch` would hold a reserved `__`); the CPU
    runtime's module still offers it as `main`."""
    from translator.runtime.cpu_launch import load_cpu

    path = tmp_path / "mainmod.py"
    path.write_text('''from numba import cuda
@cuda.jit("void(float32[::1])")
def main(a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = i
''')
    mod = load_cpu(path)
    a = np.zeros(5, dtype=np.float32)
    mod.main[1, 8](a)
    assert a.tolist() == [0, 1, 2, 3, 4]
    assert "void main_2(" in mod.cu and "main_2_launch(" in mod.cu and "void main(" not in mod.cu
    assert "(renamed: main -> main_2)" in mod.cu


@pytest.mark.skipif(NVCC is None, reason="g++ accepts floor(int64_t); only nvcc refuses it in device code")
def test_floor_of_an_integer_compiles_with_nvcc(tmp_path):
    """Found by tests/test_fuzz.py: math.floor(n) of an int64 printed floor(n), a host-only overload under nvcc.
    Numba converts the integer to double first, and so does the translation now."""
    cu = translate_source(HEADER_LINES.replace("float32)", "int64)") + "    a[i] = math.floor(x) + math.ceil(i)\n",
                          "floor.py")
    assert "floor((double)x)" in cu
    assert not compile_errors(cu, tmp_path), compile_errors(cu, tmp_path)


@pytest.mark.skipif(NVCC is None, reason="g++ accepts rint(int8_t); only nvcc refuses it in device code")
def test_round_of_an_integer_compiles_with_nvcc(tmp_path):
    """Found reading numba-cuda's typing of the builtins: round(int8) called rint on the integer, a host-only
    overload under nvcc, so the self-check stopped a kernel Numba compiles (round(int8) is an int64 there)."""
    cu = translate_source(HEADER_LINES.replace("float32)", "int8)") + "    a[i] = round(x) + round(a[i])\n",
                          "round.py")
    assert not compile_errors(cu, tmp_path), compile_errors(cu, tmp_path)


@pytest.mark.needs("g++")
def test_round_of_an_integer_is_the_integer():
    from translator.runtime.cpu_launch import load_cpu

    mod = load_cpu(source=HEADER_LINES.replace("float32)", "int8)").replace("float32[::1]", "int64[::1]")
                   + "    a[i] = round(x) * 1000 + round(i)\n")
    a = np.zeros(4, np.int64)
    mod.k[1, 4](a, np.int8(-128))
    assert a.tolist() == [-128000 + i for i in range(4)]


def test_a_hex_literal_made_a_float_is_printed_as_a_float():
    """Found by tests/test_fuzz.py: math.log(0x7f) kept the literal's hex spelling after it became 127.0, and
    the printer crashed (hex() of a float): exit 70 with a traceback."""
    cu = translate_source(HEADER_LINES + "    a[i] = math.log(0x7f) + (0xff & i)\n", "hexlit.py")
    assert "log(127.0)" in cu and "0xff" in cu


@pytest.mark.needs("g++", "c++")
def test_min_of_an_int64_and_a_literal_compiles(tmp_path):
    """Found by tests/test_fuzz.py: min(n, 0) of an int64 printed n2c::py_min(n, 0), and the template could not
    deduce one type from int64_t and int (g++ and nvcc both refused it)."""
    cu = translate_source(HEADER_LINES.replace("float32)", "int64)") + "    a[i] = min(x, 0) + max(1, x, 2)\n",
                          "minmax.py")
    assert "n2c::py_min<int64_t>(x, 0)" in cu or "n2c::py_min(x, (int64_t)0)" in cu
    assert not compile_errors(cu, tmp_path), compile_errors(cu, tmp_path)


@pytest.mark.needs("g++", "c++")
def test_a_64_bit_literal_beside_an_int64_compiles(tmp_path):
    """Found by tests/test_fuzz.py: a 64-bit literal prints as 5000000000LL (long long), an int64_t is a long:
    n2c::floordiv(n, -5000000000LL) and n2c::py_min(n, -7000000000LL) could not deduce their type."""
    source = '''from numba import cuda
@cuda.jit("void(int64[::1], int64, uint64)")
def k(a, n, u):
    i = cuda.grid(1)
    a[i] = n // -5000000000 + min(n, -7000000000) + max(u, 18000000000000000000)
    cuda.atomic.add(a, 0, 6000000000)
'''
    cu = translate_source(source, "literals.py")
    assert not compile_errors(cu, tmp_path), compile_errors(cu, tmp_path)


# --------------------------------------------------------------------------- source text

def test_a_latin1_coding_line_is_honoured(tmp_path):
    """PEP 263: once rejected as 'not UTF-8 text'."""
    source = ('# -*- coding: latin-1 -*-\n"""Caf\xe9."""\n' + HEADER_LINES + "    a[i] = x  # r\xe9sum\xe9\n")
    rc, err, _, out = translate(tmp_path, source.encode("latin-1"))
    assert rc == 0, err
    assert "a[i] = x;" in out.read_text()


def test_a_byte_that_is_not_utf8_is_located(tmp_path):
    rc, err, _, _ = translate(tmp_path, HEADER_LINES.encode() + b"    a[i] = x  # caf\xe9\n")
    assert_located(rc, err, 6, "source encoding: byte 0xe9 is not valid utf-8")


def test_an_unknown_encoding_is_located(tmp_path):
    rc, err, _, _ = translate(tmp_path, b"# -*- coding: klingon -*-\n" + HEADER_LINES.encode())
    assert_located(rc, err, 1, "source encoding")


def test_a_nul_byte_is_located(tmp_path):
    rc, err, _, _ = translate(tmp_path, HEADER_LINES + "    a[i] = x\0\n")
    assert_located(rc, err, 6, "syntax error: source code cannot contain null bytes")


def test_a_directory_is_a_user_error(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "translator.cli", "translate", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "no Python module" in proc.stderr and "Traceback" not in proc.stderr
    from translator.api import translate_file  # the API reads one file: a folder is the user's mistake too
    with pytest.raises(UserError, match="cannot read it"):
        translate_file(tmp_path)


def test_a_long_source_line_is_shown_around_the_column():
    with pytest.raises(UserError) as info:
        translate_source(HEADER_LINES + "    a[i] = " + "x + " * 200 + "lambda: 1\n", "long.py")
    text = str(info.value)
    shown = text.splitlines()[1]
    assert shown.endswith("lambda: 1") and shown.strip().startswith("...") and len(shown) < 140
    caret = text.splitlines()[2]
    assert shown[caret.index("^")] == "l"


# --------------------------------------------------------------------------- the reserved-name data

def test_reserved_names_are_read_from_the_headers():
    from translator.ir.cnames import reserved

    names = reserved()
    for name in ("INFINITY", "NAN", "expf", "llabs", "main", "threadIdx", "warpSize", "int64_t", "printf",
                 "atomicAdd", "__syncthreads" if "__syncthreads" in names else "dim3", "std", "n2c_cpu"):
        assert name in names, name
    assert len(names) > 5000


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed: the data file needs the CUDA headers")
def test_reserved_names_data_matches_the_headers():
    """Regenerate the set from nvcc's and g++'s preprocessed headers and compare with the committed file; on
    another toolchain than the one it was made with, every name the headers there declare must still be in it."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import reserved_names as tool
    finally:
        sys.path.pop(0)
    header, kinds = tool.generate(tool.find_nvcc(), os.environ.get("CXX", "g++"))
    fresh = tool.render(header, kinds)
    committed = tool.DATA.read_text()
    toolchain, committed_kinds = tool.parse(committed)
    if toolchain == tool.parse(fresh)[0]:
        assert committed == fresh, "translator/ir/reserved_names.txt is stale: run python3 tools/reserved_names.py"
    else:
        missing = set().union(*kinds.values()) - set().union(*committed_kinds.values())
        assert not missing, f"names this toolchain declares that the data file lacks: {sorted(missing)[:50]}"


# --------------------------------------------------------------------------- the drop-in, with such names

CLASHING_MODULE = '''from numba import cuda
import math


@cuda.jit("void(float32[::1], float32[::1], float32, int64)")
def main(at, guard, INFINITY, stream):
    i = cuda.grid(1)
    x_shape0 = 2.0
    expf = INFINITY * x_shape0
    llabs = abs(stream)
    if i < at.shape[0]:
        guard[i] = at[i] + expf + llabs + math.exp(0.0)
'''


@pytest.fixture(scope="module")
def clashing(tmp_path_factory):
    """The torch extension of a kernel whose names clash with C (main, INFINITY, expf, llabs), with the .cu's
    made-up names (x_shape0) and with the binding's own (at: torch's namespace, guard, stream)."""
    pytest.importorskip("torch")
    import numba2cuda

    path = tmp_path_factory.mktemp("clash") / "clashing.py"
    path.write_text(CLASHING_MODULE)
    return numba2cuda.load(path, progress=False)


@pytest.mark.needs("g++")
@pytest.mark.slow
def test_a_kernel_with_clashing_names_builds_as_a_torch_extension(clashing):
    """Builds (nvcc and the torch headers; no GPU needed) and keeps the Python names for the user."""
    assert list(clashing.kernels) == ["main"]
    assert "void main_2(" in clashing.cu and "const at::Tensor &at_" in clashing.cpp
    assert 'py::arg("at")' in clashing.cpp and 'module.def("main"' in clashing.cpp
    import torch

    with pytest.raises(TypeError, match="argument 'INFINITY'"):
        clashing.main[1, 32](torch.zeros(4), torch.zeros(4), "x", 1)


@pytest.mark.gpu
def test_a_kernel_with_clashing_names_computes_what_numba_does(clashing):
    """On the GPU: guard[i] = at[i] + 2 * INFINITY + |stream| + exp(0), every renamed name in its place."""
    import torch

    at = torch.arange(40, dtype=torch.float32, device="cuda")
    guard = torch.full((40,), float("nan"), device="cuda")
    clashing.main[2, 32](at, guard, 1.5, -7)
    torch.cuda.synchronize()
    assert guard.cpu().tolist() == (at.cpu() + 2 * 1.5 + 7 + 1).tolist()


def test_a_type_error_without_a_node_of_its_own_is_located_at_its_statement():
    # an expression the lowering made (a tuple variable's item) has no libcst node: the error went to line 1
    from types import SimpleNamespace

    from translator.analysis.typer import TypeErrorAt, Typer

    added = []
    typer = Typer.__new__(Typer)
    typer.fn, typer.reporter = SimpleNamespace(node="the def"), SimpleNamespace(add_unsupported=added.append)
    typer.report(TypeErrorAt(None, "array index", "indices must be integers"), "the statement")
    typer.report(TypeErrorAt(None, "array index", "indices must be integers"), None)
    typer.report(TypeErrorAt("the index", "array index", "indices must be integers"), "the statement")
    assert [e.node for e in added] == ["the statement", "the def", "the index"]


@pytest.mark.parametrize("module", ["-m translator.cli", "-m numba2cuda"])
def test_a_project_file_named_like_a_standard_module_does_not_break_the_command(tmp_path, module):
    """`python -m translator.cli` run in a kernel's folder puts the folder first on sys.path, and pyxem's
    utils/signal.py (which imports pyxem) took the place of the standard `signal` when numba2cuda imported
    subprocess: a traceback, exit 1, before any message of numba2cuda's own."""
    (tmp_path / "signal.py").write_text("raise ImportError('the project's signal.py, not the standard module')\n")
    (tmp_path / "kern.py").write_text(HEADER_LINES + "    if i < a.shape[0]:\n        a[i] += x\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, *module.split(), "translate", "kern.py", "-o", "out.cu"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "a[i] += x;" in (tmp_path / "out.cu").read_text()
