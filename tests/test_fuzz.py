"""Property: for any kernel module, `numba2cuda translate` exits 0 with a .cu that compiles (g++ with the CPU
runtime's header, as runtime/cpurun.py builds it; nvcc -c when nvcc is installed), or exits 2 with every error
located at file:line:col; never a traceback, a signal or a hang.

The modules come from hypothesis: random expressions and statements, nesting past every limit (parentheses,
chains of operators, blocks), and names drawn from the reserved sets (macros, keywords, math functions, the
names the translator makes up itself: `a_shape0`, `i_stop`, `k_launch`), plus constructs kernels cannot have.

Budgets: by default (CI) a short, derandomized run in-process (a hang fails the example after HANG_SECONDS);
NUMBA2CUDA_FUZZ=long runs NUMBA2CUDA_FUZZ_EXAMPLES (default 2000) random examples, each `translate` in a
subprocess with a timeout, so a signal is seen as one (NUMBA2CUDA_FUZZ_SUBPROCESS=0: in-process, faster);
--hypothesis-show-statistics counts the outcomes:

    NUMBA2CUDA_FUZZ=long NUMBA2CUDA_FUZZ_EXAMPLES=3000 python3 -m pytest -p no:cacheprovider tests/test_fuzz.py
"""

from __future__ import annotations

import io
import keyword
import os
import re
import shutil
import subprocess
import sys
import threading
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from translator import cli
from translator.ir.cnames import reserved
from translator.runtime.cpurun import HEADER

ROOT = Path(__file__).resolve().parents[1]
LONG = os.environ.get("NUMBA2CUDA_FUZZ") == "long"
EXAMPLES = int(os.environ.get("NUMBA2CUDA_FUZZ_EXAMPLES", "2000")) if LONG else 25
SUBPROCESS = LONG and os.environ.get("NUMBA2CUDA_FUZZ_SUBPROCESS", "1") != "0"
HANG_SECONDS = 120  # far above the few seconds the largest input the translator accepts takes
NVCC = shutil.which("nvcc") or (os.environ.get("CUDA_HOME") and shutil.which(
    "nvcc", path=str(Path(os.environ["CUDA_HOME"]) / "bin")))
LOCATED = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<col>\d+): error: ", re.MULTILINE)

settings.register_profile("ci", max_examples=EXAMPLES, derandomize=True, deadline=None, print_blob=True,
                          database=None, suppress_health_check=list(HealthCheck))
settings.register_profile("long", max_examples=EXAMPLES, deadline=None, print_blob=True,
                          suppress_health_check=list(HealthCheck))

# --------------------------------------------------------------------------- names

# Python names the generated code itself relies on: a local of one of these names changes what the code means
PYTHON_MEANINGFUL = {"cuda", "np", "math", "numba", "range", "min", "max", "abs", "int", "float", "bool", "print",
                     "len", "round", "float32", "float64", "int32", "int64", "True", "False", "None", "i"}
MADE_UP = ["a_shape0", "x_shape0", "out_shape0", "tw_arg", "n_arg", "i_stop", "j_stop", "j_count", "j_k", "j_",
           "tmp0_", "tmp1_", "k_launch", "f_result", "f_ret", "f_2", "TW", "N_", "n2c", "n2c_launch",
           "n2c_dynamic_smem", "grid", "block", "stream", "shared_bytes", "args", "gx", "guard", "s", "err",
           "module", "check_array", "at", "c10", "torch", "std", "main", "INFINITY", "NAN", "expf", "llabs",
           "index", "y0", "j0", "time", "_X", "__x", "a__b", "_", "α", "ﬁ", "v_X"]
ORDINARY = ["a", "b", "c", "x", "y", "acc", "val", "tmp", "t", "u", "w", "j", "k", "n", "m"]


def reserved_identifiers() -> list[str]:
    return sorted(n for n in reserved() if n.isidentifier() and not keyword.iskeyword(n)
                  and n not in PYTHON_MEANINGFUL)


RESERVED = reserved_identifiers()
names = st.one_of(st.sampled_from(ORDINARY), st.sampled_from(MADE_UP), st.sampled_from(RESERVED)) \
    .filter(lambda n: n not in PYTHON_MEANINGFUL)

# --------------------------------------------------------------------------- modules

MATH1 = ["math.sqrt", "math.exp", "math.log", "math.sin", "math.fabs", "math.floor", "math.ceil", "math.tanh",
         "np.float32", "abs", "int", "float", "math.isnan"]
BINOPS = ["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>"]
CMPS = ["<", "<=", ">", ">=", "==", "!="]
UNSUPPORTED = ["lst = [1, 2, 3]", "yield 1", "f = lambda q: q", "s = 'text'", "del a", "assert a", "x = None",
               "z = {1: 2}", "import os", "global G", "q = [j for j in range(3)]", "await a", "raise ValueError",
               "x = a if a else", "x = 1j", "with open('f') as f:\n        pass", "x: int = 1", "x = (yield)",
               "print(a, sep='')", "x = a.b", "x = a[1:2:3]", "x = ...", "nonlocal a"]


class Writer:
    """Builds one module's text from hypothesis draws."""

    def __init__(self, data):
        self.data = data
        self.draw = data.draw
        self.lines: list[str] = []

    def literal(self) -> str:
        return self.draw(st.one_of(
            st.integers(-3, 40).map(str), st.integers(-2**70, 2**70).map(str),
            st.floats(allow_nan=False, allow_infinity=False, width=32).map(repr),
            st.sampled_from(["math.inf", "-math.inf", "math.nan", "math.pi", "0x7f", "1e308", "1e-320", "True"])))

    def expr(self, scope: list[str], depth: int) -> str:
        leaf = st.one_of(st.sampled_from(scope), st.just("LIT"))
        if depth <= 0:
            choice = self.draw(leaf)
            return self.literal() if choice == "LIT" else choice
        kind = self.draw(st.sampled_from(["leaf", "leaf", "bin", "bin", "un", "cmp", "bool", "call", "minmax",
                                          "ifexp", "paren", "load", "chain", "shape"]))
        if kind == "leaf":
            return self.expr(scope, 0)
        if kind == "bin":
            op = self.draw(st.sampled_from(BINOPS))
            return f"{self.expr(scope, depth - 1)} {op} {self.expr(scope, depth - 1)}"
        if kind == "un":
            return f"({self.draw(st.sampled_from(['-', '+', '~', 'not ']))}{self.expr(scope, depth - 1)})"
        if kind == "cmp":
            n = self.draw(st.integers(1, 3))
            parts = [self.expr(scope, depth - 1) for _ in range(n + 1)]
            ops = [self.draw(st.sampled_from(CMPS)) for _ in range(n)]
            return parts[0] + "".join(f" {o} {p}" for o, p in zip(ops, parts[1:]))
        if kind == "bool":
            op = self.draw(st.sampled_from([" and ", " or "]))
            return f"({self.expr(scope, depth - 1)}{op}{self.expr(scope, depth - 1)})"
        if kind == "call":
            return f"{self.draw(st.sampled_from(MATH1))}({self.expr(scope, depth - 1)})"
        if kind == "minmax":
            n = self.draw(st.integers(2, 5))
            return f"{self.draw(st.sampled_from(['min', 'max']))}(" + \
                ", ".join(self.expr(scope, depth - 1) for _ in range(n)) + ")"
        if kind == "ifexp":
            return f"({self.expr(scope, depth - 1)} if {self.expr(scope, depth - 1)} else {self.expr(scope, depth - 1)})"
        if kind == "paren":  # nesting past CPython's 200 parentheses and numba2cuda's 1000 levels, now and then
            n = self.draw(st.one_of(st.integers(1, 5), st.sampled_from([150, 199, 201, 2000])))
            return "(" * n + self.expr(scope, depth - 1) + ")" * n
        if kind == "load":
            return f"{self.arrays[0]}[i]"
        if kind == "chain":
            n = self.draw(st.one_of(st.integers(2, 30), st.sampled_from([250, 999, 1100])))
            op = self.draw(st.sampled_from(["+", "*", "-", " and ", " or "]))
            return "(" + op.join(self.expr(scope, 0) for _ in range(n)) + ")"
        return f"{self.arrays[self.draw(st.integers(0, 1))]}.shape[0]"

    def block(self, scope: list[str], depth: int, indent: int, in_loop: bool) -> None:
        pad = "    " * indent
        for _ in range(self.draw(st.integers(1, 4))):
            kind = self.draw(st.sampled_from(["assign", "assign", "aug", "if", "for", "while", "store", "shared",
                                              "call", "break", "bad"]))
            if kind == "assign":
                name = self.draw(names)
                self.lines.append(f"{pad}{name} = {self.expr(scope, self.draw(st.integers(0, 3)))}")
                if indent == 1:
                    scope.append(name)
            elif kind == "aug":
                name = self.draw(st.sampled_from(scope))
                op = self.draw(st.sampled_from(["+=", "-=", "*=", "//=", "|="]))
                self.lines.append(f"{pad}{name} {op} {self.expr(scope, 1)}")
            elif kind == "if" and depth > 0:
                self.lines.append(f"{pad}if {self.expr(scope, 2)}:")
                self.block(list(scope), depth - 1, indent + 1, in_loop)
                if self.draw(st.booleans()):
                    self.lines.append(f"{pad}else:")
                    self.block(list(scope), depth - 1, indent + 1, in_loop)
            elif kind == "for" and depth > 0:
                var = self.draw(names)
                args = ", ".join(self.expr(scope, 1) for _ in range(self.draw(st.integers(1, 3))))
                self.lines.append(f"{pad}for {var} in range({args}):")
                self.block(scope + [var], depth - 1, indent + 1, True)
            elif kind == "while" and depth > 0:
                var = self.draw(names)
                self.lines.append(f"{pad}{var} = 0")
                self.lines.append(f"{pad}while {var} < {self.draw(st.integers(0, 4))}:")
                self.lines.append(f"{pad}    {var} += 1")
                self.block(scope + [var], depth - 1, indent + 1, True)
            elif kind == "store":
                self.lines.append(f"{pad}{self.arrays[1]}[i] = {self.expr(scope, self.draw(st.integers(0, 3)))}")
            elif kind == "shared":
                name = self.draw(names)
                self.lines.append(f"{pad}{name} = cuda.shared.array({self.draw(st.sampled_from(['32', '0']))}, "
                                  f"{self.draw(st.sampled_from(['float32', 'np.int32']))})")
                self.lines.append(f"{pad}{name}[cuda.threadIdx.x % 32] = {self.expr(scope, 1)}")
                self.lines.append(f"{pad}cuda.syncthreads()")
            elif kind == "call" and self.device:
                self.lines.append(f"{pad}{self.draw(names)} = {self.device}({self.expr(scope, 1)}, "
                                  f"{self.expr(scope, 1)})")
            elif kind == "break" and in_loop:
                self.lines.append(f"{pad}{self.draw(st.sampled_from(['break', 'continue']))}")
            elif kind == "bad" and self.draw(st.integers(0, 3)) == 0:
                self.lines.append(pad + self.draw(st.sampled_from(UNSUPPORTED)))
            else:
                self.lines.append(f"{pad}{self.arrays[1]}[i] += 1")

    def module(self) -> str:
        self.lines = ["import math", "import numpy as np", "from numba import cuda, float32, int32", ""]
        if self.draw(st.booleans()):
            self.lines.insert(0, "# -*- coding: latin-1 -*-")
        self.arrays = [self.draw(names), self.draw(names)]
        constants = []
        for _ in range(self.draw(st.integers(0, 3))):
            name = self.draw(names)
            self.lines.append(f"{name} = {self.literal()}")
            constants.append(name)
        self.device = None
        if self.draw(st.booleans()):
            self.device = self.draw(names)
            p, q = self.draw(names), self.draw(names)
            self.lines += ["", "", "@cuda.jit(device=True)", f"def {self.device}({p}, {q}):",
                           f"    return {self.expr([p, q], 2)}"]
        kernel = self.draw(names)
        scalars = [self.draw(names), self.draw(names)]
        types = [self.draw(st.sampled_from(["float32", "int32", "int64", "float64"])) for _ in scalars]
        params = ", ".join(self.arrays + scalars)
        sig = f"void(float32[::1], float32[::1], {types[0]}, {types[1]})"
        self.lines += ["", "", f'@cuda.jit("{sig}")', f"def {kernel}({params}):", "    i = cuda.grid(1)",
                       f"    if i >= {self.arrays[1]}.shape[0]:", "        return"]
        scope = scalars + constants + ["i"]
        self.block(scope, self.draw(st.integers(0, 3)), 1, False)
        self.lines.append(f"    {self.arrays[1]}[i] = {self.expr(scope, self.draw(st.integers(0, 4)))}")
        return "\n".join(self.lines) + "\n"


# --------------------------------------------------------------------------- running translate

def translate_in_process(path: Path, out: Path) -> tuple[int | None, str]:
    """(exit code, stdout + stderr) of `numba2cuda translate`, in a thread; None if it ran past HANG_SECONDS."""
    result: dict = {}

    def run():
        buf = io.StringIO()
        with redirect_stderr(buf), redirect_stdout(buf):
            result["rc"] = cli.main(["translate", str(path), "-o", str(out)])
        result["text"] = buf.getvalue()

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(HANG_SECONDS)
    return (None, "") if worker.is_alive() else (result.get("rc"), result.get("text", ""))


def translate_in_subprocess(path: Path, out: Path) -> tuple[int | None, str]:
    try:
        proc = subprocess.run([sys.executable, "-m", "translator.cli", "translate", str(path), "-o", str(out)],
                              capture_output=True, text=True, timeout=HANG_SECONDS, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return None, ""
    return proc.returncode, proc.stdout + proc.stderr


def compile_errors(cu: Path) -> str:
    """"" if the .cu compiles as the CPU runtime builds it and (with nvcc) as nvcc builds it, else the errors."""
    out = []
    proc = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-x", "c++", "-include", str(HEADER), str(cu)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        out.append("g++ (CPU runtime):\n" + proc.stderr[-3000:])
    if NVCC:
        proc = subprocess.run([NVCC, "-c", str(cu), "-o", str(cu.with_suffix(".o")), "-arch=sm_80"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            out.append("nvcc:\n" + proc.stderr[-3000:])
    return "\n".join(out)


def _event(text: str) -> None:
    """hypothesis.event, which only a running @given test may call (the checker's own tests call it directly)."""
    try:
        event(text)
    except InvalidArgument:
        pass


def check_module(source: str, tmp: Path) -> None:
    path = tmp / "kernel_under_test.py"
    out = tmp / "kernel_under_test.cu"
    out.unlink(missing_ok=True)
    encoding = "latin-1" if source.startswith("# -*- coding: latin-1") else "utf-8"
    try:
        path.write_bytes(source.encode(encoding))
    except UnicodeEncodeError:
        path.write_bytes(source.replace("# -*- coding: latin-1 -*-", "# utf-8").encode("utf-8"))
    rc, text = (translate_in_subprocess if SUBPROCESS else translate_in_process)(path, out)
    assert rc is not None, f"translate hung (> {HANG_SECONDS} s) on:\n{source[:3000]}"
    assert "Traceback" not in text and "internal error" not in text, f"traceback on:\n{source[:3000]}\n{text[-3000:]}"
    assert rc in (0, 2), f"exit {rc} (a signal is negative) on:\n{source[:3000]}\n{text[-3000:]}"
    if rc == 2:
        first = next((line for line in text.splitlines() if " error: " in line), "")
        _event("exit 2: " + re.sub(r"'[^']*'|\d+", "_", first.split(" error: ", 1)[-1].split(":")[0])[:40])
        errors = [line for line in text.splitlines() if " error: " in line or line.startswith("error")]
        assert errors, f"exit 2 without an error:\n{text[-2000:]}"
        for line in errors:
            m = LOCATED.match(line)
            assert m and m.group("path") == str(path), f"error not at file:line:col: {line!r}\n{source[:3000]}"
        assert not out.exists(), "exit 2 left an output file behind"
        return
    _event("exit 0: compiled")
    problems = compile_errors(out)
    assert not problems, f"the translation does not compile:\n{problems}\n--- source:\n{source}\n--- .cu:\n" + \
        out.read_text()[-6000:]


@pytest.mark.needs("g++", "c++")
@settings(settings.get_profile("long" if LONG else "ci"))
@given(data=st.data())
def test_translate_exits_0_with_code_that_compiles_or_2_with_a_location(data, tmp_path_factory):
    source = Writer(data).module()
    check_module(source, tmp_path_factory.mktemp("fuzz"))


def test_fuzzer_draws_reserved_names_and_made_up_ones():
    """The generator does reach the names that broke translations: macros, math functions, made-up names."""
    assert {"INFINITY", "NAN", "expf", "llabs", "main"} <= set(RESERVED) | set(MADE_UP)
    assert "x_shape0" in MADE_UP and "n2c_dynamic_smem" in MADE_UP
    assert len(RESERVED) > 1000  # read from the data file, not a hand list


@pytest.mark.parametrize("source", [
    "from numba import cuda\n@cuda.jit('void(float32[::1])')\ndef k(a):\n    a[0] = 1\n",
    "from numba import cuda\n@cuda.jit('void(float32[::1])')\ndef k(a):\n    a[0] = lambda: 1\n",
], ids=["translates", "refused"])
@pytest.mark.needs("g++", "c++")
def test_the_property_checker_accepts_both_outcomes(source, tmp_path):
    check_module(source, tmp_path)


@pytest.mark.needs("g++", "c++")
def test_the_property_checker_fails_on_code_that_does_not_compile(tmp_path):
    """compile_errors is not a stub: C that cannot compile is caught."""
    cu = tmp_path / "bad.cu"
    cu.write_text("__global__ void k(float *a) { float INFINITY = 1.0f; a[0] = INFINITY; }\n"
                  "#include <cmath>\n__global__ void j(float *a) { float INFINITY = 1.0f; a[0] = INFINITY; }\n")
    assert compile_errors(cu)
