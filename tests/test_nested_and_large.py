"""Code seen in the seventeenth collection of public kernels: functions defined inside a kernel (a genetic
program's generated primitives), a module of sixty kernels (a technical-analysis library), a tuple a sibling module
computes; and the functions of numba-cuda's supported list that a sweep of it found untranslated."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from translator import translate_source
from translator.errors import UserError
from translator.frontend.module import parse_source
from translator.lower.program import Options

REPO = Path(__file__).resolve().parent.parent


def translate(src: str, **options) -> str:
    return translate_source(textwrap.dedent(src), "mod.py", Options(**options))


def error(src: str, **options) -> str:
    with pytest.raises(UserError) as exc:
        translate(src, **options)
    return exc.value.text


# ------------------------------------------------------------------ functions defined inside a kernel

NESTED = """
    from numba import cuda

    @cuda.jit(device=True)
    def neg(v):
        return v - 1.0

    @cuda.jit("void(float32[::1], float32[::1])")
    def a(x, out):
        i = cuda.grid(1)
        scale = 3.0

        def neg(v):
            return -v * scale

        def twice(v):
            return neg(v) * 2.0

        if i < x.shape[0]:
            out[i] = twice(x[i])

    @cuda.jit("void(float32[::1], float32[::1])")
    def b(x, out):
        i = cuda.grid(1)
        if i < x.shape[0]:
            out[i] = neg(x[i])

    @cuda.jit("void(float32[::1], float32[::1])")
    def c(x, out):
        i = cuda.grid(1)

        def at(k, shift=1):
            return x[(k + shift) % x.shape[0]] + i

        if i < x.shape[0]:
            out[i] = at(i)
"""


def test_functions_defined_inside_a_kernel_are_its_own_device_functions():
    text = translate(NESTED)
    # each kernel calls its own: a's neg (which reads a's constant) is not the module's neg, which b calls
    assert "return -v * scale;" in text and "static constexpr double scale = 3.0;" in text
    a_neg = text[text.index("return -v * scale;") - 200:text.index("return -v * scale;")]
    called_by_b = text.split("__global__ void b(")[1].split("}")[0]
    assert "__device__ double neg(float v)" in a_neg
    assert "out[i] = neg_2(x[i]);" in called_by_b and "return v - 1.0;" in text.split("neg_2(float v)")[1][:80]


def test_a_function_defined_inside_a_kernel_gets_what_it_reads_of_the_kernel_at_each_call():
    text = translate(NESTED)
    # the kernel's parameter and per-thread variable, passed where it is called (their values then), default kept
    assert "__device__ double at(int64_t k, int64_t shift, int64_t i, const float *x, int64_t x_shape0)" in text
    assert "out[i] = at(i, 1, i, x, x_shape0);" in text


def test_a_lambda_bound_in_a_kernel_is_a_function_of_it():
    text = translate("""
        from numba import cuda

        @cuda.jit("void(float32[::1], float32[::1])")
        def k(x, out):
            i = cuda.grid(1)
            sq = lambda v: v * v
            shifted = lambda v, s=1.0: sq(v) + s + i
            if i < x.shape[0]:
                out[i] = shifted(x[i])
    """)
    assert "__device__ float sq(float v)" in text and "return sq(v) + s + i;" in text
    assert "out[i] = shifted(x[i], 1.0, i);" in text


def test_a_function_defined_twice_in_a_kernel_is_refused_where_the_first_is():
    text = error("""
        from numba import cuda

        @cuda.jit("void(float32[::1])")
        def k(out):
            def f(v):
                return v
            out[0] = f(1.0)
            def f(v):
                return -v
            out[1] = f(1.0)
    """)
    assert "mod.py:6:5: error: nested function 'f': the kernel defines this name again below" in text


# ------------------------------------------------------------------ large modules

def _many_kernels(count: int) -> str:
    return "import math\nfrom numba import cuda\n" + "".join(f"""

@cuda.jit("void(float32[::1], float32[::1], int32)")
def k{k}(x, out, n):
    i = cuda.grid(1)
    if i < n:
        v = x[i] * {k}.0 + 1.0
        if v > 2.0:
            v = math.sqrt(v) - x[(i + 1) % n]
        out[i] = v * 0.5 + x[i] / (1.0 + v * v)
""" for k in range(count))


def test_a_module_of_three_hundred_kernels_is_read():
    """31,000 syntax nodes: past the old limit of 25,000 (numta's module of 60 kernels has 27,400)."""
    text = translate_source(_many_kernels(300), "many.py", Options(kernels=["k299"]))
    assert "__global__ void k299(" in text and "k298" not in text


def test_trial_translations_of_one_module_share_its_parse():
    """Each kernel the rules try alone gets a fresh ModuleInfo (its own report); the libcst tree and its positions
    are parsed once: a module of 60 kernels, 3 without types, took 147 s to report, 60 parses of it."""
    src = _many_kernels(3)
    first, second = parse_source(src, "many.py"), parse_source(src, "many.py")
    assert first is not second and first.reporter is not second.reporter
    assert first.module is second.module


def test_the_report_of_a_large_module_with_untyped_kernels_comes_in_seconds(tmp_path):
    src = _many_kernels(200) + "".join(f"""

@cuda.jit
def untyped{k}(x, out):
    out[0] = x[0]
""" for k in range(3))
    path = tmp_path / "many.py"
    path.write_text(src)
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "translator.cli", "translate", str(path), "-o", str(tmp_path / "o.cu")],
                         capture_output=True, text=True, cwd=REPO, timeout=600)
    elapsed = time.monotonic() - started
    assert run.returncode == 2 and run.stderr.count("error:") == 3, run.stderr
    assert "kernel 'untyped0' without types" in run.stderr
    assert elapsed < 60, elapsed  # one parse of the module per kernel took 386 s here


def test_the_list_of_kernels_written_is_cut_short(tmp_path):
    path = tmp_path / "many.py"
    path.write_text(_many_kernels(12))
    run = subprocess.run([sys.executable, "-m", "translator.cli", "translate", str(path), "-o", str(tmp_path / "o.cu"),
                          "--no-check"], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert "(12 kernels: k0, k1, k2, k3, k4, k5, k6, k7 and 4 more;" in run.stderr, run.stderr


# ------------------------------------------------------------------ values of a sibling module

def test_a_tuple_a_sibling_module_computes_names_the_import_mode(tmp_path):
    (tmp_path / "consts.py").write_text("import numpy as np\nW = tuple(np.float64(w) for w in (4 / 9, 1 / 9))\n")
    path = tmp_path / "kern.py"
    path.write_text(textwrap.dedent("""
        from numba import cuda
        from consts import W

        @cuda.jit("void(float64[::1], float64[::1])")
        def weigh(f, rho):
            i = cuda.grid(1)
            if i < rho.shape[0]:
                f[i] = W[0] * rho[i] + W[1]
    """))
    with pytest.raises(UserError) as exc:
        translate_source(path.read_text(), str(path), Options())
    assert "(imported from consts) is computed when the module runs" in exc.value.text
    assert "hint: translate with --import-module" in exc.value.text


def test_cuda_jit_called_on_a_function_of_a_sibling_module_makes_a_device_function(tmp_path):
    """blasvicco's image correlation: `cuda_corrcoef = cuda.jit(sig, device=True)(my.corrcoef)`, my a module next
    to the file (was "computed when the module runs")."""
    (tmp_path / "helpers.py").write_text("def scale(x, a):\n    return x * a\n")
    path = tmp_path / "kern.py"
    path.write_text(textwrap.dedent("""
        from numba import cuda
        import helpers as my

        cuda_scale = cuda.jit("float32(float32, float32)", device=True)(my.scale)

        @cuda.jit("void(float32[:], float32)")
        def k(x, a):
            i = cuda.grid(1)
            if i < x.size:
                x[i] = cuda_scale(x[i], a)
    """))
    text = translate_source(path.read_text(), str(path), Options())
    assert "__device__ float cuda_scale(float x, float a)" in text and "return x * a;  // helpers.py:2" in text
    assert "x[i] = cuda_scale(x[i], a);" in text


# ------------------------------------------------------------------ numba-cuda's supported functions

@pytest.mark.parametrize("body", [
    "out[i] = math.gamma(x[i])",
    "out[i] = math.nextafter(x[i], y[i])",
    "v = a[i]; v = operator.iadd(v, 2); v = operator.ilshift(v, 1); out[i] = v",
    "out[i] = operator.itruediv(x[i], 2.0)",
    "out[i] = np.greater_equal(x[i], a[i]) + np.logical_not(y[i])",
    "out[i] = np.right_shift(a[i], 2) ^ np.bitwise_or(a[i], b[i])",
    "out[i] = cmath.acos(complex(x[i], y[i])).real + cmath.atanh(complex(x[i], y[i])).imag",
    "out[i] = cmath.acosh(complex(x[i], y[i])).real + cmath.asinh(complex(x[i], y[i])).real",
    "out[i] = np.argmax(x) + y.argmin() + a.argmax()",
    "out[i] = np.nanvar(x) + np.nanstd(a)",
])
def test_functions_numba_cuda_supports_translate(body):
    """Each compiles with numba-cuda 0.30.4 (cuda.compile_ptx, cc 9.0); math.gcd, which its typing lists, and
    np.min of an array do not, and are refused."""
    text = translate(f"""
        import cmath, math, operator
        import numpy as np
        from numba import cuda

        @cuda.jit("void(float64[::1], float64[::1], float64[::1], int64[::1], int64[::1])")
        def k(x, y, out, a, b):
            i = cuda.grid(1)
            if i < x.size:
                {body}
    """)
    assert "__global__ void k(" in text
