"""Kernels as Numba sees them: found however the module makes them (decorators, cuda.jit(sig)(fn) calls, project
decorators, factories, functions that enclose them), with free names resolved as Numba resolves them, and
every decorator option honoured or noted. Each case is a module a Numba user writes; the translation is read
for what matters (the kernel found, its name, the constant's value), and the messages for what is not found."""

from __future__ import annotations

import re
import textwrap

import pytest

from translator.lower.names import entry_name

from translator import translate_source
from translator.errors import UserError
from translator.ir.typesys import parse_types_option
from translator.frontend.module import parse_source
from translator.lower.program import Options, build_program


def translate(src: str, **options) -> str:
    return translate_source(textwrap.dedent(src), "mod.py", Options(**options))


def program(src: str, **options):
    return build_program(parse_source(textwrap.dedent(src), "mod.py"), Options(**options))


def error(src: str, **options) -> str:
    with pytest.raises(UserError) as exc:
        translate(src, **options)
    return exc.value.text


def kernels(src: str, **options) -> list[str]:
    return [entry_name(k) for k in program(src, **options).kernels]  # the names Python reaches them by


# ------------------------------------------------------------------ kernels inside functions (doc examples)

DOC_STYLE = """
    def test_ex_matmul():
        from numba import cuda
        from numba.cuda import float32
        import numpy as np

        TPB = 16

        @cuda.jit
        def fast_matmul(A, B, C):
            sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
            x, y = cuda.grid(2)
            tx = cuda.threadIdx.x
            ty = cuda.threadIdx.y
            tmp = float32(0.0)
            for i in range(cuda.gridDim.x):
                sA[ty, tx] = A[y, tx + i * TPB]
                cuda.syncthreads()
                for j in range(TPB):
                    tmp += sA[ty, j] * B[j, x]
                cuda.syncthreads()
            C[y, x] = tmp

        x_h = np.arange(16).reshape([4, 4])
        fast_matmul[(1, 1), (TPB, TPB)](x_h, x_h, x_h)
"""


def test_kernel_inside_a_function_with_its_imports_and_constants():
    cu = translate(DOC_STYLE, types=parse_types_option("A=float32[:, :], B=float32[:, :], C=float32[:, :]"))
    assert "__global__ void fast_matmul(" in cu
    assert "static constexpr int64_t TPB = 16;" in cu
    assert "__shared__ float sA[TPB][TPB];" in cu


def test_kernel_inside_a_function_without_types_says_how_to_give_them():
    text = error(DOC_STYLE)
    assert "kernel 'fast_matmul' without types" in text and "--types" in text


def test_same_kernel_name_in_two_functions_is_two_kernels():
    src = """
        def test_one():
            from numba import cuda
            @cuda.jit("void(float32[::1])")
            def kernel(a):
                a[0] = 1.0

        def test_two():
            from numba import cuda
            @cuda.jit("void(int32[::1])")
            def kernel(a):
                a[0] = 2
    """
    assert kernels(src) == ["kernel", "kernel_2"]
    assert kernels(src, kernels=["test_two.kernel"]) == ["kernel"]
    text = error(src, kernels=["kernel"])
    assert "several kernels are named 'kernel'" in text and "test_one.kernel" in text and "test_two.kernel" in text


def test_closure_constant_shadows_a_module_constant_of_another_value():
    src = """
        from numba import cuda
        N = 4

        def make():
            N = 8
            @cuda.jit("void(int64[::1])")
            def inner(a):
                a[0] = N
            return inner

        @cuda.jit("void(int64[::1])")
        def outer(a):
            a[0] = N
    """
    cu = translate(src)
    assert "static constexpr int64_t N = 4;" in cu
    assert "static constexpr int64_t N_2 = 8;" in cu and "a[0] = N_2;" in cu  # the enclosing function's N


def test_device_function_of_the_enclosing_function_is_the_one_called():
    src = """
        def test_a():
            from numba import cuda
            @cuda.jit(device=True)
            def helper(x):
                return x + 1
            @cuda.jit("void(int64[::1])")
            def ka(a):
                a[0] = helper(a[0])

        def test_b():
            from numba import cuda
            @cuda.jit(device=True)
            def helper(x):
                return x * 7
            @cuda.jit("void(int64[::1])")
            def kb(a):
                a[0] = helper(a[0])
    """
    cu = translate(src)
    assert "return x + 1" in cu and "return x * 7" in cu
    assert "a[0] = helper(a[0]);" in cu and "a[0] = helper_2(a[0]);" in cu


# ------------------------------------------------------------------ kernels made by calling cuda.jit

def test_cuda_jit_called_on_a_function_names_the_kernel_by_its_binding():
    src = """
        from numba import cuda

        def add_one(a):
            i = cuda.grid(1)
            if i < a.shape[0]:
                a[i] += 1

        add_one_gpu = cuda.jit("void(float32[::1])")(add_one)
    """
    assert kernels(src) == ["add_one_gpu"]
    assert kernels(src, kernels=["add_one"]) == ["add_one_gpu"]  # the function's own name finds it too


def test_cuda_jit_called_in_test_methods_gives_one_kernel_per_signature():
    src = """
        import numpy as np
        from numba import cuda, uint32, float64

        def atomic_add(ary):
            tid = cuda.threadIdx.x
            cuda.atomic.add(ary, tid, 1)

        class TestAtomics:
            def test_u32(self):
                cuda_func = cuda.jit("void(uint32[:])")(atomic_add)
                cuda_func[1, 32](np.zeros(32, np.uint32))

            def test_f64(self):
                cuda_func = cuda.jit(argtypes=[float64[:]])(atomic_add)
    """
    prog = program(src)
    assert [k.c_name for k in prog.kernels] == ["atomic_add_uint32", "atomic_add_float64"]
    assert {k.python_name for k in prog.kernels} == {"atomic_add"}
    assert any("argtypes" in n.construct for n in prog.notices)


def test_cuda_jit_of_a_function_with_options():
    src = """
        from numba import cuda

        def scale(a):
            a[cuda.grid(1)] *= 2.0

        scale_gpu = cuda.jit(scale, fastmath=True)
    """
    prog = program(src, types=parse_types_option("a=float32[::1]"))
    assert prog.kernels[0].c_name == "scale_gpu" and prog.kernels[0].options["fastmath"] is True


@pytest.mark.parametrize("decorator", [
    # a name bound to cuda.jit with options
    "gpu = cuda.jit('void(float32[::1])', fastmath=True)\n\n@gpu",
    # a project decorator that applies cuda.jit to the function it is given
    "def gpu(f):\n    return cuda.jit('void(float32[::1])')(f)\n\n@gpu",
    # one that takes the signature and returns cuda.jit's decorator
    "def gpu(sig):\n    return cuda.jit(sig, fastmath=True)\n\n@gpu('void(float32[::1])')",
    # one that returns an inner decorator
    "def gpu(sig):\n    def deco(fn):\n        return cuda.jit(sig)(fn)\n    return deco\n\n@gpu('void(float32[::1])')",
    # a pass-through wrapper
    "def gpu(*args, **kwargs):\n    return cuda.jit(*args, **kwargs)\n\n@gpu('void(float32[::1])')",
])
def test_project_decorators_that_wrap_cuda_jit(decorator):
    src = f"from numba import cuda\n\n{decorator}\ndef double(a):\n    i = cuda.grid(1)\n    a[i] = a[i] * 2\n"
    assert kernels(src) == ["double"]


def test_kernel_option_vouches_for_a_decorator_from_a_package_it_cannot_read():
    """fbpic's kernels are decorated with its own @compile_cupy (cuda.jit underneath), from an installed package
    numba2cuda does not run. Named with --kernel, a function that indexes CUDA threads is taken as a kernel, with
    a note; unnamed, or not indexing threads, it is not guessed at."""
    src = """
        from numba import cuda
        from myproject.gpu import compile_gpu

        @compile_gpu
        def scale(a, s):
            i = cuda.grid(1)
            if i < a.size:
                a[i] *= s

        @compile_gpu
        def helper(a):
            a[0] = 1.0
    """
    types = parse_types_option("a=float32[::1], s=float32")
    prog = program(src, kernels=["scale"], types=types)
    assert [entry_name(k) for k in prog.kernels] == ["scale"]
    assert any("@compile_gpu" in d.construct and "taken to compile a kernel as @cuda.jit does, since --kernel "
               "scale names it" in d.message for d in prog.notices)
    assert "__global__ void scale(float *a, int64_t a_shape0, float s)" in translate(src, kernels=["scale"],
                                                                                    types=types)
    assert "no @cuda.jit kernel found" in error(src, types=types)
    assert "its decorator @compile_gpu comes from myproject.gpu, which numba2cuda cannot read" in \
        error(src, kernels=["helper"], types=parse_types_option("a=float32[::1]"))


def test_kernel_option_vouches_for_a_function_compiled_where_it_cannot_follow():
    """numba-cuda's own tests define kernels as plain functions and compile them in a helper
    (`def run(self, func): kernel = cuda.jit(func)`). Named with --kernel, a function that returns nothing and
    indexes CUDA threads or is handed to something is translated as @cuda.jit compiles it, with a note; one that
    returns a value, or is only ever called, is not."""
    src = """
        import math
        from numba import cuda

        def math_hypot(A, B, C):
            i = cuda.grid(1)
            C[i] = math.hypot(A[i], B[i])

        def helper(A, i):
            return A[cuda.grid(1)] + i

        def set_one(a, v):
            a[0] = v

        def host_side(a, v):
            a[0] = v

        class TestMath:
            def binary(self, func):
                kernel = cuda.jit(func)
                return kernel

            def test_set(self):
                self.binary(set_one)
    """
    types = parse_types_option("A=float32[::1], B=float32[::1], C=float32[::1]")
    prog = program(src, kernels=["math_hypot"], types=types)
    assert [entry_name(k) for k in prog.kernels] == ["math_hypot"]
    assert any("not compiled with cuda.jit where numba2cuda can see it; translated as @cuda.jit would compile it"
               in d.message for d in prog.notices)
    assert "without types: the types of A, B, C are unknown" in error(src, kernels=["math_hypot"])
    assert "this function is not compiled with cuda.jit here" in error(
        src, kernels=["helper"], types=parse_types_option("A=float32[::1], i=int64"))
    # no thread index, but handed to the helper that compiles it (numba-cuda's set_a, simple_fp16add)
    ab = parse_types_option("a=float32[::1], v=float32")
    assert "a[0] = v;" in translate(src, kernels=["set_one"], types=ab)
    assert "this function is not compiled with cuda.jit here" in error(src, kernels=["host_side"], types=ab)


def test_a_jit_kept_in_a_local_then_applied():
    """`dec = cuda.jit(void(float64[:, :], int8, float64[:, :])); kernel = dec(cu_mat_power)` (numba-cuda's
    test_powi): the signature is the one dec holds."""
    src = """
        from numba import cuda, void, float64, int8

        def cu_mat_power(A, power, power_A):
            y, x = cuda.grid(2)
            if y < A.shape[0] and x < A.shape[1]:
                power_A[y, x] = A[y, x] ** power

        class TestPowi:
            def test_powi(self):
                dec = cuda.jit(void(float64[:, :], int8, float64[:, :]))
                kernel = dec(cu_mat_power)
    """
    cu = translate(src, kernels=["cu_mat_power"])
    assert "// kernel cu_mat_power(A: float64[:, :], power: int8, power_A: float64[:, :])" in cu


def test_a_signature_known_only_when_a_helper_runs_takes_types():
    """`cuda.jit((arytype, arytype))(math_modf)` in a test helper whose parameter arytype is the type: nothing
    here knows it, so the kernel is one without types, and --types supplies them (the error said 'unknown
    type')."""
    src = """
        import math
        from numba import cuda

        def math_sqrt(A, B):
            i = cuda.grid(1)
            B[i] = math.sqrt(A[i])

        class TestMath:
            def unary_template(self, func, arytype):
                kernel = cuda.jit((arytype, arytype))(func)

            def test_sqrt(self):
                self.unary_template(math_sqrt, float64[::1])

        def compile_sqrt(arytype):
            return cuda.jit((arytype, arytype))(math_sqrt)
    """
    assert "kernel 'math_sqrt' without types: its signature names 'arytype', which is a parameter of " \
        "'compile_sqrt'" in error(src, kernels=["math_sqrt"])
    cu = translate(src, kernels=["math_sqrt"], types=parse_types_option("A=float32[::1], B=float32[::1]"))
    assert "B[i] = sqrtf(A[i]);" in cu


def test_factory_called_with_constants_at_module_level():
    src = """
        from numba import cuda

        def make_scaler(factor, offset=1.0):
            @cuda.jit("void(float32[::1], float32[::1])")
            def scale(x, out):
                i = cuda.grid(1)
                if i < x.shape[0]:
                    out[i] = x[i] * factor + offset
            return scale

        triple = make_scaler(3.0)
        halve = make_scaler(0.5, offset=0.0)
    """
    cu = translate(src)
    assert "void triple(" in cu and "void halve(" in cu
    assert "factor = 3.0;" in cu and "offset = 1.0;" in cu and "factor_2 = 0.5;" in cu and "offset_2 = 0.0;" in cu
    assert "x[i] * factor + offset" in cu and "x[i] * factor_2 + offset_2" in cu


def test_factory_with_computed_arguments_names_the_import_mode():
    src = """
        import os
        from numba import cuda

        def make_scaler(factor):
            @cuda.jit("void(float32[::1])")
            def scale(x):
                x[0] = x[0] * factor
            return scale

        k = make_scaler(float(os.environ["F"]))
    """
    text = error(src)
    assert "closure variable 'factor'" in text and "--import-module" in text


# ------------------------------------------------------------------ signatures

def test_several_signatures_one_c_function_each():
    src = """
        from numba import cuda

        @cuda.jit(["void(float32[::1], float32[::1])", "void(float64[::1], float64[::1])"])
        def double(x, out):
            i = cuda.grid(1)
            if i < x.shape[0]:
                out[i] = 2 * x[i]
    """
    prog = program(src)
    assert [k.c_name for k in prog.kernels] == ["double_float32", "double_float64"]
    assert [k.python_name for k in prog.kernels] == ["double", "double"]


def test_signature_in_a_variable_and_numba_cuda_types_imports():
    src = """
        from numba import cuda
        from numba.cuda.types import int32
        from numba import types

        SIG = "void(int32[::1], int32)"

        @cuda.jit(SIG)
        def fill(a, v):
            a[cuda.grid(1)] = int32(v)

        @cuda.jit(types.void(types.float32[::1]))
        def zero(a):
            a[cuda.grid(1)] = 0
    """
    cu = translate(src)
    assert "void fill(int *a, int v)" in cu and "void zero(float *a)" in cu


def test_unituple_return_type_of_a_device_function():
    src = """
        from numba import cuda, types

        @cuda.jit(types.UniTuple(types.float32, 2)(types.float32), device=True)
        def pair(x):
            return x, x + 1

        @cuda.jit("void(float32[::1])")
        def k(a):
            p, q = pair(a[0])
            a[0] = p + q
    """
    assert "pair_result pair(float x)" in translate(src)


def test_non_numba_annotations_are_ignored_as_numba_ignores_them():
    src = """
        import numpy as np
        from numba import cuda

        @cuda.jit("void(float32[::1], int64)")
        def k(a: np.array, n: int) -> None:
            a[0] = n
    """
    prog = program(src)
    assert prog.kernels[0].c_name == "k"
    assert any("not a Numba type" in n.message for n in prog.notices)
    # a forward reference to a Python class (callmetandat's kernels: "DeviceNDArray") is not a Numba type either
    prog = program(src.replace("a: np.array", 'a: "DeviceNDArray"'))
    assert sum("not a Numba type" in n.message for n in prog.notices) == 2


def test_a_kernel_defined_twice_is_the_last_definition():
    src = """
        from numba import cuda

        @cuda.jit("void(float32[::1])")
        def add(a):
            a[0] += 1

        @cuda.jit("void(float64[::1])")
        def add(a):
            a[0] += 2
    """
    cu = translate(src)
    assert "void add(double *a)" in cu and "float *a" not in cu


# ------------------------------------------------------------------ decorator options

@pytest.mark.parametrize("option", ["lineinfo=True", "fastmath=True", "debug=True, opt=False", "opt=True",
                                    "max_registers=32", "cache=True", "inline='always'", "forceinline=True",
                                    "link=['f.cu']", "launch_bounds=(256, 2)", "boundscheck=False", "lto=True",
                                    "shared_memory_carveout='MaxL1'", "extensions=[]"])
def test_every_option_numba_cuda_accepts_translates(option):
    src = f"""
        from numba import cuda

        @cuda.jit("void(float32[::1])", {option})
        def k(a):
            a[0] = 1.0
    """
    assert "__global__" in translate(src)


def test_launch_bounds_and_max_registers_are_kernel_attributes():
    base = "from numba import cuda\n\n@cuda.jit('void(float32[::1])', {})\ndef k(a):\n    a[0] = 1.0\n"
    assert "__global__ void __launch_bounds__(256) k(" in translate(base.format("launch_bounds=256"))
    assert "__global__ void __launch_bounds__(128, 4) k(" in translate(base.format("launch_bounds=(128, 4)"))
    assert "__global__ void __maxnreg__(40) k(" in translate(base.format("max_registers=40"))


def test_an_ignored_option_is_a_note_not_an_error():
    src = "from numba import cuda\n\n@cuda.jit('void(float32[::1])', debug=True, cache=True)\ndef k(a):\n    a[0] = 1\n"
    notes = [n.render_note() for n in program(src).notices]
    assert len(notes) == 2 and all(":3:" in n and "note: @cuda.jit option" in n for n in notes)


def test_the_debug_note_on_division_by_zero_is_only_where_an_integer_is_divided():
    """debug=True kernels that never divide were told their division by zero differs (numba-cuda's debuginfo
    tests); the note is now where a kernel, or a device function it calls, may divide by 0. Numba's debug mode has
    Python's error model, which raises on a float's division by zero too."""
    head = "from numba import cuda\n\n"
    note = "debug=True in Numba raises ZeroDivisionError on a division by zero"
    plain = head + "@cuda.jit('void(int64[::1])', debug=True)\ndef k(a):\n    a[0] = a[1] * 2\n"
    assert note not in translate(plain)
    helper = head + "@cuda.jit(device=True)\ndef half(x, y):\n    return x // y\n\n"
    called = helper + "@cuda.jit('void(int64[::1])', debug=True)\ndef k(a):\n    a[0] = half(a[1], a[2])\n"
    assert note in translate(called)
    safe = head + "@cuda.jit('void(int64[::1])', debug=True)\ndef k(a):\n    a[0] = a[1] * 2 // 4\n"
    assert note not in translate(safe)  # a divisor of 4 is never 0
    floats = head + "@cuda.jit('void(float64[::1])', debug=True)\ndef k(a):\n    a[0] = a[1] / a[2]\n"
    assert note in translate(floats)


def test_an_unsupported_option_on_another_kernel_does_not_fail_this_one():
    src = """
        from numba import cuda

        @cuda.jit("void(float32[::1])", fast_math=True)
        def other(a):
            a[0] = 1.0

        @cuda.jit("void(float32[::1])")
        def this(a):
            a[0] = 2.0
    """
    assert kernels(src, kernels=["this"]) == ["this"]
    assert "option 'fast_math'" in error(src)  # all kernels: the other one's problem is reported
    assert "option 'fast_math'" in error(src, kernels=["other"])  # and --kernel other says why


# ------------------------------------------------------------------ module values

def test_constant_under_a_decidable_if():
    src = """
        from numba import cuda, config

        USE_DOUBLE = False
        if USE_DOUBLE:
            TILE = 8
        else:
            TILE = 16
        if config.ENABLE_CUDASIM:
            BLOCK = 4
        else:
            BLOCK = 256

        @cuda.jit("void(int64[::1])")
        def k(a):
            a[0] = TILE + BLOCK
    """
    cu = translate(src)
    assert "TILE = 16;" in cu and "BLOCK = 256;" in cu


def test_script_settings_from_sys_argv_take_their_defaults_with_a_note():
    """Scripts read optional settings from the command line; Numba bakes in what the compiling process was given.
    numba2cuda reads them as for `python FILE` (the author's defaults) and says so where a kernel uses one; a
    setting no kernel uses is not noted."""
    src = """
        import sys
        from numba import cuda

        threads = 512 if len(sys.argv) < 3 else int(sys.argv[2])
        per_thread = 8 if len(sys.argv) < 4 else int(sys.argv[3])
        if len(sys.argv) > 1:
            SCALE = float(sys.argv[1])
        else:
            SCALE = 0.5

        @cuda.jit("void(float32[::1])")
        def k(a):
            for i in range(per_thread):
                a[cuda.grid(1) * per_thread + i] *= SCALE
    """
    prog = program(src)
    cu = translate(src)
    assert "per_thread = 8;" in cu and "SCALE = 0.5" in cu
    notes = [f"{d.construct}: {d.message}" for d in prog.notices]
    assert len(notes) == 2, notes
    assert any("per_thread = 8 if len(sys.argv) < 4 else int(sys.argv[3]): taken as 8" in n for n in notes)
    assert any("SCALE = 0.5: taken as 0.5, sys.argv read as when the module runs without arguments" in n
               for n in notes)
    assert not any("threads" in n for n in notes)


def test_physical_constants_from_scipy_constants(monkeypatch):
    """Scientific kernels (fbpic's particle push) use `from scipy.constants import c`: a library of published
    numbers, read by importing the library (none of the user's code runs). A stand-in module keeps this test off
    scipy; the value is what the kernel bakes in, as Numba does."""
    import sys
    import types

    fake = types.ModuleType("scipy.constants")
    fake.c, fake.e, fake.name = 299792458.0, 1.602176634e-19, "not a number"
    monkeypatch.setitem(sys.modules, "scipy", types.ModuleType("scipy"))
    monkeypatch.setitem(sys.modules, "scipy.constants", fake)
    src = """
        from numba import cuda
        from scipy.constants import c
        import scipy.constants as sc

        @cuda.jit("void(float64[::1], float64)")
        def push(x, dt):
            i = cuda.grid(1)
            x[i] += c * dt + sc.e
    """
    cu = translate(src)
    assert "x[i] += 299792458.0 * dt + 1.602176634e-19;" in cu
    assert "scipy.constants.name" in error(src.replace("sc.e", "sc.name"))


def test_scipy_is_installed_with_translate_so_its_constants_are_read():
    """fbpic's `INV_MC = 1. / (m_e * c)` and `c*dt` (three kernels of the fourteenth session's collection) failed
    with "'c' comes from scipy.constants, which is not installed here": SciPy is now one of translate's own
    dependencies, and the constant baked in is the installed SciPy's, as Numba's would be."""
    import scipy.constants

    src = """
        from numba import cuda
        from scipy.constants import c, m_e
        INV_MC = 1. / (m_e * c)

        @cuda.jit("void(float64[::1], float64)")
        def push(x, dt):
            i = cuda.grid(1)
            x[i] += c * dt * INV_MC
    """
    cu = translate(src)
    assert repr(float(scipy.constants.c)) in cu and "INV_MC" in cu


def test_cupy_scalar_types_are_numpys():
    """`cp.float32(-2.0 * pi)` at module level (PyLops): CuPy's scalar types are NumPy's, so the constant is
    a float32 without importing CuPy."""
    src = """
        from math import pi
        import cupy as cp
        from numba import cuda

        TWO_PI = cp.float32(2.0 * pi)

        @cuda.jit("void(float32[::1])")
        def k(a):
            a[0] = a[0] * TWO_PI + cp.float32(1)
    """
    cu = translate(src)
    assert "static constexpr float TWO_PI = 6.2831855f;" in cu and "a[0] * TWO_PI + 1.0f" in cu


def test_constant_under_an_undecidable_if_says_why_and_names_the_import_mode():
    src = """
        import sys
        from numba import cuda

        if sys.platform == "linux":
            TILE = 8
        else:
            TILE = 16

        @cuda.jit("void(int64[::1])")
        def k(a):
            a[0] = TILE
    """
    text = error(src)
    assert "module variable 'TILE'" in text and "is set under `if sys.platform == \"linux\"` (line 5)" in text
    assert "--import-module" in text
    assert "belongs to the enclosing function" not in text


def test_same_constant_on_every_branch_is_that_constant():
    src = """
        import sys
        from numba import cuda
        if sys.platform == "linux":
            TILE = 16
        else:
            TILE = 16

        @cuda.jit("void(int64[::1])")
        def k(a):
            a[0] = TILE
    """
    assert "TILE = 16;" in translate(src)


def test_computed_constants_and_numpy_arrays():
    src = """
        import math
        import numpy as np
        from numba import cuda, float32

        K = 5
        N = 2 ** K
        HALF = N // 2 + int(math.sqrt(16))
        WEIGHTS = np.linspace(0.0, 1.0, 5).astype(np.float32)
        TABLE = np.arange(8) * 3

        @cuda.jit("void(float32[::1], int64[::1])")
        def k(a, b):
            w = cuda.const.array_like(WEIGHTS)
            i = cuda.grid(1)
            a[i] = w[i % 5]
            b[i] = TABLE[i % 8] + N + HALF
    """
    cu = translate(src)
    assert "N = 32;" in cu and "HALF = 20;" in cu
    assert "__constant__ float WEIGHTS[5] = {0.0f, 0.25f, 0.5f, 0.75f, 1.0f};" in cu
    assert "__constant__ int64_t TABLE[8] = {0, 3, 6, 9, 12, 15, 18, 21};" in cu


def test_a_module_array_past_constant_memory_is_a_clear_error():
    src = """
        import numpy as np
        from numba import cuda

        BIG = np.zeros(20000, dtype=np.float32)

        @cuda.jit("void(float32[::1])")
        def k(a):
            a[0] = BIG[0]
    """
    text = error(src)
    assert "'BIG'" in text and "80000 bytes" in text and "64 KiB" in text


def test_constants_imported_from_a_sibling_module(tmp_path):
    (tmp_path / "params.py").write_text("import numpy as np\nBLOCK = 128\nSCALE = np.float32(0.5)\nDEPTH = BLOCK * 2\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sizes.py").write_text("TILE = 16\n")
    (tmp_path / "pkg" / "kern.py").write_text(textwrap.dedent("""
        from numba import cuda
        import params
        from params import BLOCK, SCALE
        from .sizes import TILE

        @cuda.jit("void(float32[::1])")
        def k(a):
            a[0] = BLOCK * SCALE + TILE + params.DEPTH
    """))
    from translator import translate_file

    cu = translate_file(tmp_path / "pkg" / "kern.py")
    assert "SCALE = 0.5f;" in cu and "TILE = 16;" in cu
    assert "a[0] = 128.0 * SCALE + TILE + 256;" in cu  # BLOCK (an int times a float32: float64) and params.DEPTH


HELPERS = """
    import math
    import numba
    from numba import cuda

    SCALE = 2.0

    @cuda.jit(device=True)
    def _sq(x):
        return x * x

    @cuda.jit(device=True, inline=True)
    def weight(x):
        return math.exp(-_sq(x)) * SCALE

    @numba.jit(nopython=True)
    def clamp(x):
        return min(max(x, 0.0), 1.0)
"""


def _package(tmp_path, kernel_source: str):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "helpers.py").write_text(textwrap.dedent(HELPERS))
    path = tmp_path / "pkg" / "kern.py"
    path.write_text(textwrap.dedent(kernel_source))
    return path


def test_device_functions_imported_from_modules_next_to_the_file(tmp_path):
    """Numba compiles a device function imported from another module of the project (fbpic's inline functions);
    it is read from its own file, in its own module's names, and its callees come along."""
    from translator import translate_file

    path = _package(tmp_path, """
        from numba import cuda
        from .helpers import weight, clamp
        from . import helpers as hp

        @cuda.jit(device=True)
        def _sq(x):  # the importer's own _sq is another function
            return x + x

        @cuda.jit("void(float64[::1], float64[::1])")
        def apply(a, out):
            i = cuda.grid(1)
            if i < a.size:
                out[i] = clamp(weight(a[i]) + hp.weight(_sq(a[i])))

        def test_inside():
            from .helpers import weight as w

            @cuda.jit("void(float64[::1])")
            def inner(a):
                a[0] = w(a[0])
    """)
    cu = translate_file(path)
    assert "static constexpr double SCALE = 2.0;" in cu
    assert "return exp(-v_sq(x)) * SCALE;  // helpers.py:14" in cu  # located in its own file
    assert "return x * x;  // helpers.py:10" in cu and "return x + x;  // kern.py:8" in cu
    assert "out[i] = clamp(weight(a[i]) + weight(v_sq_2(a[i])));  // kern.py:14" in cu
    assert "a[0] = weight(a[0]);" in cu  # the kernel inside a function sees its own import


def test_a_problem_in_an_imported_device_function_is_located_in_its_file(tmp_path):
    path = _package(tmp_path, """
        from numba import cuda
        from .broken import twice

        @cuda.jit("void(float64[::1])")
        def k(a):
            a[0] = twice(a[0])
    """)
    (path.parent / "broken.py").write_text("from numba import cuda\n\n@cuda.jit(device=True)\ndef twice(x):\n"
                                           "    return [x, x][0]\n")
    from translator import translate_file

    with pytest.raises(UserError) as exc:
        translate_file(path)
    assert str(exc.value).startswith(f"{path.parent / 'broken.py'}:5:12: error: list literal")


def test_a_name_imported_from_a_module_it_cannot_read_names_the_import_mode():
    src = """
        from numba import cuda
        from settings_nobody_has import N

        @cuda.jit("void(int64[::1])")
        def k(a):
            a[0] = N
    """
    text = error(src)
    assert "imported name 'N'" in text and "--import-module" in text and "used as a value" not in text


# ------------------------------------------------------------------ --kernel NAME says why

def test_kernel_option_reports_the_real_reason():
    src = """
        from numba import cuda

        @cuda.jit("void(float32[::1])", fast_math=True)
        def broken(a):
            a[0] = 1.0

        @cuda.jit(device=True)
        def helper(x):
            return x

        def plain(a):
            a[0] = 1.0
    """
    assert "option 'fast_math'" in error(src, kernels=["broken"])
    assert "is a device function" in error(src, kernels=["helper"])
    assert "not compiled with cuda.jit" in error(src, kernels=["plain"])
    text = error(src, kernels=["nothing"])
    assert "no kernel named nothing" in text and "with a problem in their decorator: broken" in text


def test_a_jit_function_only_kernels_call_is_translated_as_its_device_function():
    """numba-cuda's device-function tests: a @cuda.jit that returns a value, which only another kernel calls, is
    compiled by Numba as a device function there and can never be launched. `translate --kernel` of it gives that
    __device__ function alone (it was an error); builds and launches, which need a kernel, still say to name the
    kernel that carries it; with no types, the error says how to give them."""
    src = """
        from numba import cuda

        @cuda.jit
        def plus_one(x):
            return x + 1

        @cuda.jit
        def twice_plus_one(x):
            return 2 * plus_one(x)

        @cuda.jit(device=True)
        def clamp(x, lo, hi):
            return min(max(x, lo), hi)

        @cuda.jit
        def kernel(r, x):
            i = cuda.grid(1)
            if i < len(r):
                r[i] = clamp(twice_plus_one(x[i]), 0, 100)
    """
    int32 = parse_types_option("x=int32")
    cu = translate(src, kernels=["twice_plus_one"], types=int32, device_code_alone=True)
    assert "__global__" not in cu
    assert "__device__ int64_t plus_one(int x)" in cu and "__device__ int64_t twice_plus_one(int x)" in cu
    assert "return 2 * plus_one(x);" in cu
    prog = program(src, kernels=["twice_plus_one"], types=int32, device_code_alone=True)
    assert any("returns a value, so Numba compiles it only as a device function where 'kernel' calls it (line 20), "
               "and cannot launch it: translated as that __device__ function alone" in d.message for d in prog.notices)
    text = error(src, kernels=["twice_plus_one"], types=int32)  # build, package, load: a kernel is what they launch
    assert "name 'kernel', which carries it; `numba2cuda translate` (C output, the default --emit) writes this one " \
        "as the __device__ function" in text
    text = error(src, kernels=["twice_plus_one"], device_code_alone=True)
    assert "nothing gives its parameters' types" in text and "translate 'kernel', which carries it; or pass " \
        "--types \"x=int32, ...\" to translate it as the __device__ function it is" in text
    # a device=True function by name: the same, where translate writes C alone
    cu = translate(src, kernels=["clamp"], types=parse_types_option("x=float32, lo=float32, hi=float32"),
                   device_code_alone=True)
    assert re.search(r"__device__ float clamp\(float x, float lo, float hi_?\)", cu) and "__global__" not in cu
    assert "`numba2cuda translate` (C output) writes it alone as a __device__ function" in error(src, kernels=["clamp"])
    # one that returns an array it was given has no C result of its own (it was written with a void result)
    text = error("from numba import cuda\n\n@cuda.jit(device=True)\ndef same(a):\n    a[0] = 1.0\n    return a\n",
                 kernels=["same"], types=parse_types_option("a=float32[::1]"), device_code_alone=True)
    assert "device function 'same': returns an array (one it was given)" in text


def test_an_overload_made_in_a_test_method_is_what_its_kernels_call():
    """numba-cuda's test_linked_called_through_overload: `def bar_call`, its `@overload(bar_call, target="cuda")` and
    the kernel that calls it, all inside a test method. The implementation was registered where only the overload's
    own body could see it, so the call was "is not supported in kernels"."""
    cu = translate("""
        from numba import cuda
        from numba.cuda.extending import overload

        class TestLinked:
            def test_through_overload(self):
                def bar_call(val):
                    pass

                @overload(bar_call, target="cuda")
                def ol_bar_call(a):
                    return lambda a: a * 2

                @cuda.jit("void(int32[::1], int32[::1])")
                def foo(r, x):
                    i = cuda.grid(1)
                    if i < len(r):
                        r[i] = bar_call(x[i])
    """)
    assert re.search(r"__device__ int64_t bar_call\(int a\)\n\{\n    return \(int64_t\)a \* 2;", cu), cu
    assert "r[i] = bar_call(x[i]);" in cu


# ------------------------------------------------------------------ values as the kernel sees them when it compiles

CAPTURE = """
    import numpy as np

    def test_capture():
        from numba import cuda

        TAX_RATE = 0.08
        PRICES = np.array([10.0, 25.0, 5.0], dtype=np.float64)
        {before}

        @cuda.jit
        def totals(q, out):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = q[i] * PRICES[i] * (1 + TAX_RATE)

        totals[1, 32](np.ones(3), np.zeros(3))
        TAX_RATE = 0.10
        PRICES[:] = [20.0, 50.0, 10.0]
        totals[1, 32](np.ones(3), np.zeros(3))
"""


def test_values_at_the_first_launch_as_numba_captures_them():
    cu = translate(CAPTURE.format(before=""), types=parse_types_option("q=float64[:], out=float64[:]"))
    assert "TAX_RATE = 0.08;" in cu and "PRICES[3] = {10.0, 25.0, 5.0};" in cu


def test_an_array_changed_before_the_first_launch_is_not_a_constant():
    text = error(CAPTURE.format(before="PRICES[0] = 99.0"), types=parse_types_option("q=float64[:], out=float64[:]"))
    assert "'PRICES'" in text and "changed in place (line 9)" in text


def test_a_module_array_changed_anywhere_is_not_a_constant():
    src = """
        import numpy as np
        from numba import cuda

        TABLE = np.zeros(4, dtype=np.float32)

        def setup():
            TABLE.fill(2.0)

        @cuda.jit("void(float32[::1])")
        def k(a):
            a[0] = TABLE[1]
    """
    text = error(src)
    assert "'TABLE'" in text and "changed in place (line 8)" in text and "--import-module" in text


def test_computed_values_of_the_doc_examples():
    src = """
        def test_ex():
            import numpy as np
            from numba import cuda
            from numba.cuda.types import int32

            a = cuda.to_device(np.arange(64))
            nelem = len(a)
            timeout = np.int64(np.timedelta64("3600", "s"))

            @cuda.jit("void(int64[::1])")
            def k(data):
                shr = cuda.shared.array(nelem, int32)
                tid = cuda.threadIdx.x
                shr[tid] = data[tid]
                cuda.syncthreads()
                data[tid] = shr[nelem - 1 - tid] + timeout
    """
    cu = translate(src)
    assert "__shared__ int shr[nelem];" in cu and "nelem = 64;" in cu and "timeout = 3600;" in cu


# ------------------------------------------------------------------ more ways of making kernels

def test_a_project_decorator_function_called_on_the_function():
    src = """
        from numba.cuda import jit as _jit

        def jit(fn, **kwargs):
            return _jit(**kwargs)(fn)

        def device_jit(fn, **kwargs):
            return _jit(device=True, **kwargs)(fn)

        def twice(x):
            return 2 * x

        twice = device_jit(twice)

        def _double(a):
            a[0] = twice(a[0])

        double = jit(_double)
        NUMBA2CUDA_TYPES = {"double": "a=float32[::1]"}
    """
    cu = translate(src)
    assert "__global__ void double_2(" in cu and "(renamed: double -> double_2)" in cu and "__device__" in cu and "twice(" in cu


def test_names_a_function_publishes_with_globals_update_locals():
    src = """
        def _setup():
            from numba import cuda, float32

            @cuda.jit(device=True)
            def half(x):
                return x * float32(0.5)

            globals().update(locals())

        def halve(a):
            a[0] = half(a[0])

        class Runner:
            def __init__(self):
                self.k = cuda.jit(argtypes=(float32[::1],))(halve)
    """
    cu = translate(src)
    assert "__global__ void halve(float *a)" in cu and "half_(" in cu  # cuda_fp16.h declares half


def test_a_module_an_import_names_is_not_taken_to_be_used_bare():
    """`import numpy as np` beside `from numba import *` (a Mandelbrot example): numpy is imported, as np, so no
    note says 'numpy': taken to be numpy: this module does not import it."""
    src = """
        import numpy as np
        from numba import cuda
        from numba import *

        @cuda.jit("void(float32[::1])")
        def k(a):
            a[cuda.threadIdx.x] = np.float32(1.0)
    """
    notes = [n.render_note() for n in program(src).notices]
    assert not any("taken to be" in n for n in notes), notes


def test_a_star_import_it_cannot_read_is_taken_to_bring_numba_and_says_so():
    src = """
        from helpers_nobody_has import *

        @numba.cuda.jit("void(float32[::1])")
        def k(a):
            a[numba.cuda.threadIdx.x] = 1.0
    """
    prog = program(src)
    assert [k.c_name for k in prog.kernels] == ["k"]
    assert any("'numba': taken to be numba" in n.render_note() for n in prog.notices)
    text = error(src.replace("= 1.0", "= THREADS"))
    assert "unknown name 'THREADS'" in text and "from helpers_nobody_has import *" in text and "--import-module" in text


def test_a_star_import_of_a_file_next_to_it_is_read(tmp_path):
    (tmp_path / "helpers.py").write_text("import numba\nimport numpy as np\nTHREADS = 64\n")
    (tmp_path / "k.py").write_text(textwrap.dedent("""
        from helpers import *

        @numba.cuda.jit("void(int64[::1])")
        def k(a):
            sdata = numba.cuda.shared.array(shape=THREADS, dtype=numba.int64)
            sdata[0] = a[0]
            a[0] = sdata[0] + THREADS
    """))
    from translator import translate_file

    cu = translate_file(tmp_path / "k.py")
    assert "THREADS = 64;" in cu and "__shared__ int64_t sdata[THREADS];" in cu


def test_min_max_of_an_int64_and_a_literal_compiles():
    """translate's own compile check caught this: a literal next to an int64 did not deduce the template."""
    from translator.runtime.selfcheck import check_cu

    cu = translate("""
        from numba import cuda

        @cuda.jit("void(float32[::1], int64)")
        def clamp_copy(x, first):
            j = min(max(first + cuda.threadIdx.x, 0), x.shape[0] - 1)
            x[j] = 1.0
    """)
    outcome = check_cu(cu, "mod.py")
    assert outcome.compiler and outcome.ok, outcome.problems


def test_the_drop_in_dispatches_several_signatures_by_argument_types():
    import numpy as np
    import torch
    from translator.runtime.launch import Dispatcher

    class Fake:  # a translated kernel: records what it was launched with
        def __init__(self, name):
            self.name = self.__doc__ = name

        def __getitem__(self, config):
            return lambda *args: self.name

    d = Dispatcher("double", [Fake("double_float32"), Fake("double_float64")],
                   [[("float32", 1), ("float32", 1)], [("float64", 1), ("float64", 1)]])
    assert d[1, 32](np.zeros(4, np.float64), np.zeros(4, np.float64)) == "double_float64"
    assert d[1, 32](torch.zeros(4), torch.zeros(4)) == "double_float32"
    with pytest.raises(TypeError, match="no signature takes"):
        d[1, 32](np.zeros(4, np.int32), np.zeros(4, np.int32))


@pytest.mark.gpu
def test_several_signatures_launch_like_numbas_dispatcher(tmp_path):
    """On the GPU: one drop-in name, a C kernel per signature, picked by the arguments' element types."""
    import torch
    import numba2cuda

    path = tmp_path / "double_sigs.py"
    path.write_text(textwrap.dedent("""
        from numba import cuda

        @cuda.jit(["void(float32[::1], float32[::1])", "void(float64[::1], float64[::1])"])
        def double(x, out):
            i = cuda.grid(1)
            if i < x.shape[0]:
                out[i] = 2 * x[i]
    """))
    mod = numba2cuda.load(path)
    for dtype in (torch.float32, torch.float64):
        x = torch.linspace(-3, 3, 1000, dtype=dtype, device="cuda")
        out = torch.full_like(x, float("nan"))
        mod.double[4, 256](x, out)
        assert torch.equal(out, 2 * x)


def test_the_signature_and_names_at_the_cuda_jit_call_site():
    """numba-cuda's own tests: `sig` bound in each test method, a type bound to another name (a free variable)."""
    src = """
        import numpy as np
        from numba import cuda, float64, int32

        def kernel(A, i):
            A[i] = 1

        def uses_an_alias(A, i):
            sdata = cuda.shared.array(size, dtype=nbtype)
            A[i] = sdata[i]

        size = 1024
        nbtype = float64

        class TestKernels:
            def test_float(self):
                sig = (float64[:], int32)
                k = cuda.jit(sig)(kernel)
                sig = (int32[:], int32)
                k2 = cuda.jit(sig)(uses_an_alias)
    """
    cu = translate(src)
    assert "void kernel(double *A, int i)" in cu and "void uses_an_alias(int *A, int i)" in cu
    assert "__shared__ double sdata[size];" in cu


def test_a_factory_whose_decorator_needs_its_parameters():
    src = """
        from numba import cuda

        def make_copy(threads):
            @cuda.jit("void(float32[::1], float32[::1])", launch_bounds=threads)
            def copy(x, out):
                i = cuda.grid(1)
                if i < x.shape[0]:
                    out[i] = x[i]
            return copy

        copy256 = make_copy(256)
    """
    assert "__global__ void __launch_bounds__(256) copy256(" in translate(src)


def test_a_device_array_global_is_not_baked_in():
    """numba-cuda's globals doc: a device array is captured by pointer, so its later contents reach the kernel: a
    parameter after the kernel's own, never a __constant__ copy."""
    src = """
        def test_capture():
            import numpy as np
            from numba import cuda

            PRICES = cuda.to_device(np.array([10.0, 25.0, 5.0], dtype=np.float32))

            @cuda.jit("void(float32[::1], float32[::1])")
            def totals(q, out):
                i = cuda.grid(1)
                if i < out.size:
                    out[i] = q[i] * PRICES[i] + len(PRICES)
    """
    cu = translate(src)
    assert "void totals(const float *q, float *out, int64_t out_shape0, const float *PRICES, int64_t PRICES_shape0)" \
        in cu and "q[i] * PRICES[i]) + PRICES_shape0;" in cu and "__constant__" not in cu


def test_a_first_launch_that_may_not_run_leaves_the_value_unknown():
    """A launch under an if may not happen; the kernel then compiles at a later launch, after the reassignment."""
    src = CAPTURE.format(before="").replace("        totals[1, 32](np.ones(3), np.zeros(3))\n        TAX_RATE",
                                            "        if np.random.rand() > 2:\n"
                                            "            totals[1, 32](np.ones(3), np.zeros(3))\n        TAX_RATE", 1)
    assert "if np.random.rand() > 2:" in src
    text = error(src, types=parse_types_option("q=float64[:], out=float64[:]"))
    assert "closure variable 'PRICES': is a NumPy array changed in place (line 20)" in text


def test_a_ufunc_whose_signature_is_made_at_run_time_fails_alone():
    """numba-cuda's test_gufunc builds a @guvectorize signature from a dtype computed at import: that Unsupported
    escaped discovery (exit 70, a traceback) and took every kernel of the file with it. It is now that ufunc's
    own located error, and the file's other kernels translate."""
    src = """
        import numpy as np
        from numba import cuda, guvectorize, void
        from numba.np import numpy_support as nps

        dtype = nps.from_dtype(np.dtype("float32"))

        @guvectorize([void(dtype[:], dtype[:])], "(n)->(n)", target="cuda")
        def copy_gu(a, out):
            for i in range(a.shape[0]):
                out[i] = a[i]

        @cuda.jit("void(float32[::1])")
        def twice(x):
            x[0] *= 2
    """
    assert "void twice(float *x)" in translate(src, kernels=["twice"])
    assert "mod.py:8:15: error: @guvectorize signature: unknown element type 'dtype'" in error(src)


def test_a_kernel_inside_a_function_calls_another_kernel_there():
    """numba-cuda's test_inline: both kernels defined in a test method, one calling the other (a device function
    there). The device copy was registered in the method's scope only, and the program looked it up in the
    module's table (KeyError, exit 70)."""
    src = """
        import numpy as np
        from numba import cuda, types

        class TestCudaInline:
            def _test_call_inline(self, inline):
                sig = (types.int32[::1],)

                @cuda.jit(inline=inline)
                def set_zero(a):
                    a[0] = 0

                @cuda.jit(sig)
                def call_set_zero(a):
                    set_zero(a)
    """
    cu = translate(src, kernels=["TestCudaInline._test_call_inline.call_set_zero"])
    assert "__device__ void set_zero(int *a, int64_t a_shape0)" in cu and "    set_zero(a, a_shape0);" in cu


def test_fastmath_of_one_kernel_does_not_reach_the_others():
    """Numba's fastmath is per kernel; nvcc's --use_fast_math is per file. A file whose kernels disagree builds
    exact (the fastmath kernel's note says how to get its approximations): before, the flag made the exact
    kernel divide with div.approx."""
    from translator.runtime.dropin import nvcc_flags

    src = """
        from numba import cuda

        def div(a, b, out):
            out[0] = a[0] / b[0]

        fast = cuda.jit("void(float32[::1], float32[::1], float32[::1])", fastmath=True)(div)
        prec = cuda.jit("void(float32[::1], float32[::1], float32[::1])")(div)
    """
    assert nvcc_flags(program(src)) == []
    assert "built exact; translate this kernel alone (--kernel) for Numba's approximations" in translate(src)
    assert nvcc_flags(program(src, kernels=["fast"])) == ["--use_fast_math"]


def test_kernel_option_takes_the_end_of_a_qualified_name():
    """numba-cuda's tests make kernels inside test methods: `--kernel test_one.k` picks `TestX.test_one.k`, and
    the names listed when NAME is not there are the ones --kernel takes (was 'kernels here: k' for both)."""
    src = """
        from numba import cuda

        class TestX:
            def test_one(self):
                @cuda.jit("void(float32[::1])")
                def k(a):
                    a[0] = 1.0

            def test_two(self):
                @cuda.jit("void(float32[::1])")
                def k(a):
                    a[0] = 2.0
    """
    assert "a[0] = 1.0f;" in translate(src, kernels=["test_one.k"])
    assert "a[0] = 2.0f;" in translate(src, kernels=["TestX.test_two.k"])
    text = error(src, kernels=["nope"])
    assert "no kernel named nope (kernels here: TestX.test_one.k, TestX.test_two.k)" in text


def test_a_name_from_a_package_that_is_not_installed_says_so():
    """`from scipy.constants import c` where scipy is missing (fbpic), `from mcni.utils import V2K` (mcvine): the
    message said 'cannot read without running it' and sent the user to --import-module, whose import then fails
    for the same missing package."""
    text = error("""
        from numba import cuda
        from package_nobody_installed.constants import c

        @cuda.jit("void(float64[::1])")
        def k(a):
            a[0] = c
    """)
    assert "'c' comes from package_nobody_installed.constants, which is not installed here" in text
    assert "install package_nobody_installed where numba2cuda runs" in text


def test_a_dotted_absolute_import_starts_at_a_folder_above_the_file(tmp_path):
    """`from model_numba.Layers.init import *` in model_numba/Layers/x.py, run from the project's root, whose
    folders have no __init__.py (namespace packages): the dotted path names a file above (was 'unknown name')."""
    from translator import translate_file

    layers = tmp_path / "model_numba" / "Layers"
    layers.mkdir(parents=True)
    (layers / "init.py").write_text("from numba import cuda\nfrom numba.cuda.cudadrv.devicearray import "
                                    "DeviceNDArray\nSTRIDE = 2\n")
    (layers / "pool.py").write_text(textwrap.dedent("""
        from model_numba.Layers.init import *

        @cuda.jit("void(float32[::1], float32[::1])")
        def pool(x: DeviceNDArray, out: DeviceNDArray):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = max(x[i * STRIDE], x[i * STRIDE + 1])
    """))
    assert "x[i * STRIDE]" in translate_file(layers / "pool.py")


@pytest.mark.parametrize("spelling, prefix", [("import pkg.geo.box as box", "box"),
                                              ("import pkg.geo.box", "pkg.geo.box")])
def test_a_module_of_another_subpackage_imported_under_a_name(tmp_path, spelling, prefix):
    """`import pkg.geo.box as box; box.wrap(d, L)` in pkg/sim/step.py (a molecular dynamics package): the module
    is read like `from pkg.geo import box` (was 'it comes from pkg.geo.box, which numba2cuda does not read').
    So is `import pkg.geo.box; pkg.geo.box.wrap(d, L)` (an FDTD solver's `sol_cuda.planewave.f(...)`)."""
    from translator import translate_file

    for folder in ("pkg", "pkg/geo", "pkg/sim"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "pkg" / "geo" / "box.py").write_text(textwrap.dedent("""
        from numba import cuda

        HALF = 0.5

        @cuda.jit(device=True)
        def wrap(d, length):
            return d - length if d > HALF * length else d
    """))
    (tmp_path / "pkg" / "sim" / "step.py").write_text(textwrap.dedent(f"""
        from numba import cuda
        {spelling}

        @cuda.jit("void(float32[::1], float32)")
        def step(dx, length):
            i = cuda.grid(1)
            if i < dx.shape[0]:
                dx[i] = {prefix}.wrap(dx[i], length) * {prefix}.HALF
    """))
    text = translate_file(tmp_path / "pkg" / "sim" / "step.py")
    assert "__device__ float wrap(float d, float length)" in text and "wrap(dx[i], length) * 0.5;" in text


def test_a_plain_function_imported_from_a_module_next_to_it_and_compiled_here(tmp_path):
    """fbpic's style: inline_functions.py holds plain Python functions (shared with its CPU code), and the GPU
    module compiles them: `f = cuda.jit(f, device=True, inline=True)` (was: 'it comes from .inline_functions')."""
    from translator import translate_file

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "inline_functions.py").write_text(
        "WEIGHT = 0.25\n\n\ndef weighted(a, b):\n    return a + WEIGHT * b\n")
    path = tmp_path / "pkg" / "gpu.py"
    path.write_text(textwrap.dedent("""
        from numba import cuda
        from .inline_functions import weighted
        weighted = cuda.jit(weighted, device=True, inline=True)

        @cuda.jit("void(float64[::1], float64[::1])")
        def k(a, out):
            i = cuda.grid(1)
            if i < a.size:
                out[i] = weighted(a[i], out[i])
    """))
    cu = translate_file(path)
    assert "__device__ __forceinline__ double weighted(double a, double b)" in cu
    assert "return a + WEIGHT * b;  // inline_functions.py:5" in cu and "WEIGHT = 0.25;" in cu


def test_a_constant_read_from_a_dict_literal_of_a_config_module(tmp_path):
    """stumpy's config.py: `_DEFAULTS = {"THRESHOLD": 1e-14, "FLAGS": {...}}`, `THRESHOLD = _DEFAULTS["THRESHOLD"]`,
    read as `config.THRESHOLD` after `from . import config` (the submodule, not the package's __init__). Only the
    entry read is evaluated; a dict stored into is not a constant."""
    from translator import translate_file

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from . import config\nfrom .kern import *\n")
    (tmp_path / "pkg" / "config.py").write_text(
        'import numpy as np\n_DEFAULTS = {"THRESHOLD": 1e-14, "FLAGS": {"nsz", "arcp"}, "BIG": np.finfo(np.float64).max}\n'
        'THRESHOLD = _DEFAULTS["THRESHOLD"]\n_MUTABLE = {"K": 1}\n_MUTABLE["K"] = 2\nK = _MUTABLE["K"]\n')
    path = tmp_path / "pkg" / "kern.py"
    path.write_text(textwrap.dedent("""
        from numba import cuda
        from . import config

        @cuda.jit("void(float64[::1])")
        def k(a):
            a[0] = max(a[0], config.THRESHOLD)
    """))
    assert "n2c::py_max<double>(a[0], 1e-14)" in translate_file(path)
    path.write_text(path.read_text().replace("config.THRESHOLD", "config.K"))
    with pytest.raises(UserError):
        translate_file(path)


def test_kernel_option_names_the_decorator_of_a_kernel_made_inside_a_method():
    """spinsim makes its kernels inside a method under `@jit_host(sig, max_registers)`, a decorator chosen when the
    code runs: --kernel NAME said 'no kernel named NAME (kernels here: none)'; it now points at the decorator."""
    text = error("""
        from numba import cuda

        class Simulator:
            def compile(self, jit_host):
                @jit_host("(float64[:],)", 63)
                def get_spin(state):
                    state[0] = 1.0
    """, kernels=["get_spin"])
    assert "mod.py:6:10: error: --kernel get_spin: 'get_spin' is defined here under @jit_host(" in text


def test_a_fortran_ordered_constant_array_is_baked_by_index():
    """numba-cuda's constant-memory tests: `CONST2D = np.asfortranarray(np.arange(6).reshape(2, 3))` read through
    cuda.const.array_like; a baked array is read by index, so its values go in as C[i][j] (was 'computed when the
    module runs')."""
    cu = translate("""
        import numpy as np
        from numba import cuda

        CONST2D = np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3))

        @cuda.jit("void(int32[:, ::1])")
        def k(a):
            C = cuda.const.array_like(CONST2D)
            i, j = cuda.grid(2)
            if i < 2 and j < 3:
                a[i, j] = C[i, j]
    """)
    assert "__constant__ int CONST2D[2][3] = {0, 1, 2, 3, 4, 5};" in cu


def test_a_snippet_that_never_imports_cuda_reads_it_as_numba_cuda_with_a_note():
    """numba-cuda's docs and course solutions show kernels without their imports (5 of 71 kernels in a collection
    of public code): read cuda, np, math and numba's types as they mean there, each with a note; the same kernel
    with its imports translates to the same code."""
    body = """
        @cuda.jit
        def increment(a, out):
            tmp = cuda.local.array(2, float32)
            i = cuda.grid(1)
            if i < a.shape[0]:
                tmp[0] = math.sqrt(a[i])
                out[i] = tmp[0] + np.float32(1)
    """
    types = {"types": parse_types_option("a=float32[::1], out=float32[::1]")}
    info = parse_source(textwrap.dedent(body), "mod.py")
    notes = [d.render() if hasattr(d, "render") else str(d) for d in info.notices]
    assert [n.split("taken to be ")[1].split(":")[0] for n in notes] == ["numba.cuda", "numba.float32", "math", "numpy"]
    assert "add `from numba import cuda` to run it" in notes[0]
    assert "add `import numpy as np` to run it" in notes[3]  # was `import numpy`, which binds no np
    imported = "import math\nimport numpy as np\nfrom numba import cuda, float32\n" + textwrap.dedent(body)
    strip = lambda text: re.sub(r"mod\.py:\d+", "", text.split("#include", 1)[1])  # 3 import lines fewer
    assert strip(translate(body, **types)) == strip(translate(imported, **types))
    # a name the module binds somewhere (here a parameter) is its own, never assumed
    assert "taken to be numpy" not in str(parse_source(textwrap.dedent(body).replace("(a, out)", "(a, out, np)"),
                                                       "mod.py").notices)


def test_names_a_star_import_of_a_module_next_to_it_brings_are_not_snippet_names(tmp_path):
    """A CNN's layers: `from model_numba.Layers.init import *` brings cuda, np and math with the constants; the
    note said the file never imports them."""
    from translator.frontend.module import parse_file

    (tmp_path / "init.py").write_text("import math\nimport numpy as np\nfrom numba import cuda\n\nSTRIDE = 2\n")
    path = tmp_path / "pool.py"
    path.write_text(textwrap.dedent("""
        from init import *


        @cuda.jit("void(float32[::1], float32[::1])")
        def pool(x, out):
            i = cuda.grid(1)
            if i < out.shape[0]:
                out[i] = math.sqrt(max(x[i * STRIDE], x[i * STRIDE + 1])) + np.float32(1)
    """))
    info = parse_file(str(path))
    assert not [n for n in info.notices if "never imports" in n.message], info.notices
    assert info.aliases["cuda"] == "numba.cuda" and info.aliases["np"] == "numpy"


def test_members_of_an_int_enum_are_constants():
    """Numba reads an IntEnum's members in kernels as their integers (`if mode == Mode.MUL:`); numba2cuda said
    'unknown name Mode'."""
    text = translate("""
        from enum import IntEnum, auto
        from numba import cuda

        class Mode(IntEnum):
            ADD = 0
            MUL = 4
            SUB = auto()

        @cuda.jit("void(float32[::1], int64)")
        def apply(a, mode):
            i = cuda.grid(1)
            if mode == Mode.MUL:
                a[i] = a[i] * Mode.SUB
            elif mode == Mode.ADD:
                a[i] = a[i] + 1
    """)
    assert "if (mode == 4) {" in text and "a[i] * 5" in text and "if (mode == 0) {" in text


def test_a_kernel_of_a_module_next_to_it_called_from_a_kernel_is_a_device_function(tmp_path):
    """`from helpers import swap_if` of a @cuda.jit kernel, called from this file's kernel (a bitonic sort):
    numba-cuda compiles it as a device function there; numba2cuda said 'it comes from helpers, which numba2cuda
    does not read', though helpers.py is next to it."""
    from translator import translate_file

    (tmp_path / "helpers.py").write_text(textwrap.dedent("""
        from numba import cuda

        @cuda.jit
        def swap_if(data, i, j, up):
            if up == (data[i] > data[j]):
                data[i], data[j] = data[j], data[i]
    """))
    (tmp_path / "sort.py").write_text(textwrap.dedent("""
        from numba import cuda
        from helpers import swap_if

        @cuda.jit("void(float64[::1], int64, int64)")
        def step(data, j, up):
            i = cuda.grid(1)
            if (i ^ j) > i:
                swap_if(data, i, i ^ j, up)
    """))
    text = translate_file(tmp_path / "sort.py")
    assert "__device__ void swap_if(" in text and "__global__ void swap_if" not in text
    assert "swap_if(data, data_shape0, i, i ^ j, up);" in text


def test_a_numpy_value_numpy_itself_refuses_is_unknown_not_a_crash():
    """A trading backtest's main() joins two window arrays of different lengths; reading the tuple
    `(window_short, windows_long)` as one array made NumPy raise ValueError (inhomogeneous shape), which reached
    the user as an internal error (exit 70) for kernels that never read it."""
    src = """
        import numpy as np
        from numba import cuda

        @cuda.jit("void(float64[::1], float64[::1])")
        def moving_average(x, out):
            i = cuda.grid(1)
            if i < x.shape[0]:
                out[i] = x[i]

        def main():
            short = np.array([5, 10, 15], dtype=np.int64)
            long = np.linspace(100, 200, 5, endpoint=True, dtype=np.int64)
            windows = np.concatenate((short, long), axis=0)

            @cuda.jit("void(int64[::1])")
            def uses(out):
                out[0] = windows[1]
    """
    assert "void moving_average(" in translate(src, kernels=["moving_average"])
    assert "closure variable 'windows'" in error(src, kernels=["uses"])


def test_a_conversion_python_refuses_in_a_host_function_is_unknown_not_a_crash():
    """An image classifier's `Compute()` makes `np.array(img_dim, dtype=np.int16)` of a module-level `img_dim = None`
    that the program sets before it runs; converting None to int16 raised TypeError in the constant evaluator, an
    internal error (exit 70) for every kernel of the file. A local array sized by it stays an accurate error."""
    src = """
        import numpy as np
        from numba import cuda

        img_dim = None

        @cuda.jit("void(float64[::1])")
        def classify(out):
            i = cuda.grid(1)
            if i < out.shape[0]:
                out[i] = i

        def compute():
            dims = np.array(img_dim, dtype=np.int16)

            @cuda.jit("void(float64[::1])")
            def sized(out):
                buf = cuda.local.array(dims[0], np.float64)
                buf[0] = 1.0
                out[0] = buf[0]
            return sized
    """
    assert "void classify(" in translate(src, kernels=["classify"])
    assert "closure variable 'dims'" in error(src, kernels=["compute.sized"])


def test_a_setting_only_the_scripts_block_binds_is_what_the_kernel_sees():
    """A Mandelbrot assignment sets `blockdim = (32, 8)` under `if __name__ == "__main__":` and its kernel reads
    it: it runs only as a script (imported, the name does not exist), so Numba sees the block's value. The
    error hinted at --import-module, which never runs that block. A name the module also binds before (SCALE)
    stays undecided: it was taken as the module's value, whatever the block set."""
    src = """
        from numba import cuda

        @cuda.jit("void(float32[:, ::1])")
        def fill(image):
            x, y = cuda.grid(2)
            stride_x = blockdim[0] * griddim[0]
            if x < image.shape[0] and y < image.shape[1]:
                image[x, y] = stride_x + SCALE
        {before}
        if __name__ == "__main__":
            SCALE = 2.0
            blockdim = (32, 8)
            griddim = (4, 4)
            fill[griddim, blockdim](image)
    """
    text = error(src.format(before="SCALE = 1.0"))
    assert "'SCALE': is set under `if __name__ == \"__main__\"`" in text
    cu = translate(src.format(before=""))
    assert "static constexpr double SCALE = 2.0;" in cu and "int64_t stride_x = 32 * 4;" in cu
    notes = [n.render_note() for n in program(src.format(before="")).notices]
    assert any("'blockdim': taken as (32, 8), as the file run as a script sets it" in n for n in notes)


def test_a_module_constant_rebound_under_an_undecided_test_is_not_a_constant():
    """`TPB = 16` then `if os.environ.get("BIG"): TPB = 32`: the arm's rebinding is 'assigned more than once', which
    the branch merge did not see (it compared value nodes only), so TPB was baked in as 16."""
    text = error("""
        import os
        from numba import cuda

        TPB = 16
        if os.environ.get("BIG"):
            TPB = 32

        @cuda.jit("void(float32[::1])")
        def k(a):
            a[0] = TPB
    """)
    assert "'TPB': is set under `if os.environ.get(\"BIG\")`" in text


def test_device_functions_star_imported_and_a_jit_imported_where_its_fallback_never_runs(tmp_path):
    """Two lattice gauge and four fractal kernels call device functions of `from cuda_kernels import *` (the star
    import brought constants only: 'call to dagger(): is not supported in kernels'); a fractal project decorates
    with `cuda_jit`, which utils/cuda.py imports from numba.cuda in a `try:` that also defines helpers, with a
    do-nothing `def cuda_jit` under `except ImportError:` (its kernels were 'not cuda.jit as far as numba2cuda
    can read'). And `cuda.grid(ndim=2)`, Numba's keyword, was refused."""
    from translator import translate_file

    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("")
    (tmp_path / "utils" / "cuda.py").write_text(textwrap.dedent("""
        try:
            from numba.cuda import jit as cuda_jit, grid as cuda_grid

            def threads(n):
                return (32, n // 32)
        except ImportError:
            def cuda_jit(sig=None, device=False):
                return lambda f: f
    """))
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "__init__.py").write_text("")
    (tmp_path / "kernels" / "matrices.py").write_text(textwrap.dedent("""
        from numba import cuda

        SIZE = 2

        @cuda.jit(device=True)
        def dagger(a, out):
            for i in range(SIZE):
                for j in range(SIZE):
                    out[i, j] = a[j, i].conjugate()
    """))
    path = tmp_path / "kernels" / "update.py"
    path.write_text(textwrap.dedent("""
        from numba import cuda, complex128
        from utils.cuda import cuda_jit
        from .matrices import *

        @cuda_jit("void(complex128[:, :, ::1], complex128[:, :, ::1])")
        def update(links, out):
            k, _ = cuda.grid(ndim=2)
            if k < links.shape[0]:
                dagger(links[k], out[k])
    """))
    cu = translate_file(path)
    assert "__device__ void dagger(const n2c::complex128 *a," in cu
    assert "dagger(links + k * (links_shape1 * links_shape2), links_shape1, links_shape2," in cu
    assert "int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;" in cu


def test_a_device_function_made_only_where_a_gpu_library_imported():
    """NVTabular: `_inner_product_gpu = numba.cuda.jit(device=True, inline=True)(_inner_product) if cuda else None`,
    with `cuda` from a compatibility module. A kernel calling the name compiles only where it is the device
    function (calling None fails), so that is what it names; it was "not a constant numba2cuda can evaluate"."""
    src = '''
import numba
try:
    import cupy
except ImportError:
    cupy = None


def _inner(a, b):
    return a * b + 1.0


_inner_gpu = numba.cuda.jit(device=True, inline=True)(_inner) if cupy is not None else None
_other_gpu = None if cupy is None else numba.cuda.jit(device=True)(_inner)


@numba.cuda.jit
def k(x, out):
    i = numba.cuda.grid(1)
    if i < x.size:
        out[i] = _inner_gpu(x[i], 2.0) + _other_gpu(x[i], 3.0)
'''
    cu = translate(src, types=parse_types_option("x=float64[::1], out=float64[::1]"))
    assert re.search(r"out\[i\] = v?_inner_gpu\(x\[i\], 2\.0\) \+ v?_other_gpu\(x\[i\], 3\.0\);", cu), cu


def test_a_value_a_test_method_computes_is_read_by_running_that_test(tmp_path):
    """tvb's tests make a device function inside a test method (`dcf = make_coupling(...)`) and a kernel that calls
    it. Importing the module never runs the method: the hint said to make the value at module level. The import
    mode now runs the test that makes the kernel (frontend/runentries.py), so the hint names it, and with it the
    kernel translates, calling the device function the test made."""
    src = '''
import unittest
from numba import cuda


def make_coupling(k):
    @cuda.jit(device=True)
    def coupling(x):
        return k * x
    return coupling


class TestSim(unittest.TestCase):
    def test_kuramoto(self):
        dcf = make_coupling(2.0)

        @cuda.jit
        def kernel(x, out):
            i = cuda.grid(1)
            if i < x.size:
                out[i] = dcf(x[i])
'''
    types = parse_types_option("x=float64[::1], out=float64[::1]")
    text = error(src, kernels=["kernel"], types=types)
    assert "mod.py:21:26: error: call to dcf(): 'dcf' is computed when 'test_kuramoto' runs" in text
    assert "hint: translate with --import-module: numba2cuda then imports the module, runs " \
           "'TestSim.test_kuramoto' under the CUDA simulator" in text
    from translator.frontend.module import parse_file
    from translator.emit.render import render_program

    path = tmp_path / "mod.py"
    path.write_text(src)
    options = Options(kernels=["kernel"], types=types)
    cu = render_program(build_program(parse_file(path, "sim", options), options), path.name)
    assert "static constexpr double k = 2.0;" in cu and "out[i] = coupling(x[i]);" in cu


def test_a_signature_may_spell_arrays_by_numbas_array_constructor():
    """An HPC course writes `@cuda.jit("void(Array(float64, 2, 'C'), Array(float64, 1, 'C'), int32)")`: Numba's own
    array type by its constructor. The message called it a type a library adds to Numba, and its hint could not
    help. 'A' is any layout; 'F' is column-major, indexed so; another letter is an error naming Numba's layouts."""
    src = '''
from numba import cuda

@cuda.jit("void(Array(float64, 2, 'C'), Array(float32, 1, 'A'), int32, types.Array(float64, 2, 'C'))")
def k(a, b, n, out):
    i, j = cuda.grid(2)
    if i < n and j < a.shape[1]:
        out[i, j] = a[i, j] * b[j]
'''
    cu = translate(src)
    assert "__global__ void k(const double *a, int64_t a_shape1, const float *b, int n, double *out," in cu
    fortran = translate(src.replace("Array(float64, 2, 'C'), Array(float32", "Array(float64, 2, 'F'), Array(float32"))
    assert "// kernel k(a: float64[::1, :], b: float32[:], n: int32, out: float64[:, ::1])" in fortran
    assert "out[i * out_shape1 + j] = a[j * a_shape0 + i] * b[j];" in fortran
    text = error(src.replace("Array(float64, 2, 'C'), Array(float32", "Array(float64, 2, 'X'), Array(float32"))
    assert "signature: Array(float64, 2, 'X'): Numba's layouts are 'C' (row-major), 'F' (column-major) and 'A'" in text


def test_a_signature_of_numba_types_written_over_lines_with_comments_and_flags():
    """A KNN project writes `types.Array(types.float64, 1, 'C', readonly=False, aligned=True),   # Query array`,
    one type a line, as Numba's repr spells it: the comment became part of the type ("unknown type '# Query array
    Array(...)'") and the flags were not read."""
    src = '''
import math
from numba import cuda, types

@cuda.jit(
    types.float64(
        types.Array(types.float64, 1, 'C', readonly=False, aligned=True),   # Query array
        types.Array(types.float64, 1, 'A', readonly=True, aligned=True),    # Point array
        types.int64                                                         # Number of features
    ),
    device=True,
)
def dist(q, p, n):
    s = 0.0
    for i in range(n):
        s += (q[i] - p[i]) ** 2
    return math.sqrt(s)

@cuda.jit("void(float64[::1], float64[::1], float64[::1])")
def k(q, p, out):
    out[0] = dist(q, p, q.size)
'''
    cu = translate(src)
    assert "__device__ double dist(const double *q, int64_t q_shape0, const double *p, int64_t p_shape0, int64_t n)" \
        in cu


def test_numba_imported_from_itself_is_numba():
    """`from numba import cuda, numba` (a string-distance project): the package's attribute `numba` is the package,
    and `numba.int32` was "is numba.numba.int32, which numba2cuda does not translate in kernels"."""
    src = '''
from numba import cuda, numba

@cuda.jit("void(int16[::1], int32[::1])")
def k(a, out):
    d = cuda.local.array(shape=(4,), dtype=numba.int32)
    i = cuda.grid(1)
    if i < a.size:
        d[0] = a[i]
        out[i] = d[0] + numba.int32(1)
'''
    cu = translate(src)
    assert "int d[4];" in cu and "out[i] = (int64_t)d[0] + 1;" in cu


def test_cupys_constants_are_numpys_where_cupy_is_not_installed():
    """A volume renderer compares with `cp.nan` and starts from `cp.inf`; CuPy is not installed where numba2cuda
    runs (nor needed: its constants are NumPy's), and the import's stand-in made them unknown."""
    src = '''
import cupy as cp
from numba import cuda

@cuda.jit("void(float64[::1])")
def k(out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        depth = cp.inf
        if out[i] < depth:
            out[i] = cp.pi + cp.e
'''
    cu = translate(src)
    assert "double depth = (double)INFINITY;" in cu and "out[i] = 3.141592653589793 + 2.718281828459045;" in cu


def test_a_factorys_device_function_parameter_hints_at_making_the_kernel_at_module_level():
    """A volume renderer's `kernel_constructor_render_geometry(sdf, ...)` is called only inside a render function:
    the hint said --import-module would read 'sdf', but importing the module never calls the factory."""
    src = '''
from numba import cuda

def constructor(sdf):
    @cuda.jit("void(float64[::1])")
    def render(out):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = sdf(out[i])
    return render

def render_scene(sphere, out):
    kernel = constructor(sphere)
    kernel[1, 32](out)
'''
    text = error(src, kernels=["constructor.render"])
    assert "call to sdf(): 'sdf' is a parameter of 'constructor', known only when it is called" in text
    assert "hint: make the kernel at module level (k = constructor(f, ...) with a device function f)" in text


def test_a_class_of_the_module_called_in_a_kernel_is_named_as_an_extension_type():
    """numba-cuda's Interval example types a Python class for kernels with numba.extending; the message said only
    'is not supported in kernels', with a hint about device functions, which the class is not."""
    src = '''
from numba import cuda


class Interval(object):
    def __init__(self, lo, hi):
        self.lo = lo
        self.hi = hi


@cuda.jit("void(float64[::1])")
def k(out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = Interval(1.0, 2.0).hi
'''
    text = error(src)
    assert "call to Interval(): 'Interval' is a class of this module; a type a module registers with Numba's " \
           "extension API (numba.extending) is not translated" in text


def test_a_number_of_scipys_constants_table_is_read_by_its_literal_keys():
    """fbpic's `r_e = physical_constants['classical electron radius'][0]`: a number of scipy's CODATA table
    (value, unit, uncertainty) by literal keys. It was "not a constant numba2cuda can evaluate"."""
    import math

    from scipy.constants import physical_constants

    cu = translate("""
        import math
        from numba import cuda
        from scipy.constants import physical_constants
        r_e = physical_constants['classical electron radius'][0]
        PI_RE_2 = math.pi * r_e**2

        @cuda.jit("void(float64[::1])")
        def cross_section(x):
            i = cuda.grid(1)
            x[i] = PI_RE_2 * x[i]
    """)
    assert repr(math.pi * physical_constants["classical electron radius"][0] ** 2) in cu


@pytest.mark.parametrize("spelling, read", [("from . import settings", "settings.PAD"),
                                            ("from .settings import PAD", "PAD")])
def test_a_constant_a_function_rebinds_is_noted_where_a_kernel_reads_it(tmp_path, spelling, read):
    """A detector simulation's consts module: `TIME_PADDING = 10`, and load_properties() rebinds it from a
    configuration file (`global TIME_PADDING`) before any launch. Numba compiles the value the name holds then;
    the translation has 10, which was silent. A constant nothing rebinds is not noted."""
    from translator.frontend.module import parse_file

    (tmp_path / "det").mkdir()
    (tmp_path / "det" / "__init__.py").write_text("")
    (tmp_path / "det" / "settings.py").write_text(textwrap.dedent("""
        PAD = 10
        GAIN = 2


        def load(cfg):
            global PAD
            PAD = cfg["pad"]
    """))
    path = tmp_path / "det" / "kern.py"
    path.write_text(textwrap.dedent(f"""
        from numba import cuda
        {spelling}
        from .settings import GAIN


        @cuda.jit("void(float64[::1])")
        def shift(t):
            i = cuda.grid(1)
            if i < t.shape[0]:
                t[i] = (t[i] - {read}) * GAIN
    """))
    prog = build_program(parse_file(str(path)), Options())
    notes = [f"{d.loc}: {d.construct}: {d.message}" for d in prog.notices]
    assert len(notes) == 1, notes
    assert "settings.py:7:5: 'PAD': load() rebinds it (global PAD)" in notes[0] and ", 10:" in notes[0]


def test_a_whole_file_skips_a_kernel_only_another_kernel_calls_with_a_note():
    """numba-cuda's device-function tests: `@cuda.jit def add_one(x): return x + 1` without device=True, which
    only kernel k calls. Translating the file failed on add_one's missing types; k carries it as a device
    function, and add_one alone is noted as not a kernel of its own (asked for by --kernel, an error says why)."""
    src = """
        from numba import cuda

        @cuda.jit
        def add_one(x):
            return x + 1

        @cuda.jit("void(float32[:])")
        def k(a):
            i = cuda.grid(1)
            a[i] = add_one(a[i])
    """
    prog = program(src)
    notes = [f"{d.construct}: {d.message}" for d in prog.notices]
    assert any("kernel 'add_one': not translated as a kernel of its own" in n and "'k' (line 11) calls it" in n
               for n in notes), notes
    assert "__device__ double add_one(float x)" in translate(src)
    # asked for, typed or not, it cannot be launched: it returns a value (was 'return with a value in a kernel')
    for types in ({}, parse_types_option("x=float32")):
        with pytest.raises(UserError, match=r"(?s)kernel 'add_one': returns a value, so Numba compiles it only as "
                                            r"a device function where 'k' calls it \(line 11\).*(name|translate) 'k'"):
            translate(src, kernels=["add_one"], types=types)


def test_a_kernel_made_in_a_test_that_returns_a_value_names_the_kernel_launched():
    """numba-cuda's test_declared_in_called_function_twice: device_func_1 and device_func_2 (both @cuda.jit
    returning values) and `kernel`, all made in the test method; asked for device_func_1, the error named no
    caller (a nested kernel was not looked for) and said 'return with a value in a kernel'."""
    src = """
        from numba import cuda

        def test_twice():
            @cuda.jit
            def device_func_1(x):
                return x * 2

            @cuda.jit
            def device_func_2(x):
                return device_func_1(x)

            @cuda.jit("void(int32[::1], int32[::1])")
            def kernel(r, x):
                i = cuda.grid(1)
                if i < len(r):
                    r[i] = device_func_2(x[i])
    """
    with pytest.raises(UserError, match=r"(?s)kernel 'device_func_1': returns a value, so Numba compiles it only as a "
                                        r"device function where 'kernel' calls it \(line 17, through 'device_func_2'\)"
                                        r".*name 'kernel', which carries it"):
        translate(src, kernels=["device_func_1"], types=parse_types_option("x=int32"))
    cu = translate(src, kernels=["device_func_2"], types=parse_types_option("x=int32"), device_code_alone=True)
    assert "__device__ int64_t device_func_2(int x)" in cu and "return device_func_1(x);" in cu


@pytest.mark.parametrize("spelling", [
    '"void(float{}[:], float{}[:])".format(bits, bits)',
    'f"void(float{bits}[:], float{bits}[:])"',
    '"void(float%d[:], float%d[:])" % (bits, bits)',
    '"void(float" + str(bits) + "[:], float" + str(bits) + "[:])"',
])
def test_a_signature_the_module_computes_from_its_constants(spelling):
    """A scaling library picks float32 or float64 signatures by `"void(float{}[:], ...)".format(bits, bits)`, bits
    set under `if USE_64:`. It was "cannot read signature '\"void(float{}[:], float{}[:])\".format(bits, bits)'"."""
    cu = translate(f'''
        from numba import cuda
        USE_64 = False
        if USE_64:
            bits = 64
        else:
            bits = 32

        @cuda.jit({spelling})
        def scale(d, delta):
            i = cuda.grid(1)
            if i < d.shape[0]:
                d[i] = -delta[i] / d[i]
        ''')
    assert "void scale(float *d, int64_t d_shape0, const float *delta)" in cu


def test_a_signature_string_computed_from_what_the_module_cannot_know_is_located():
    text = error('''
        import sys
        from numba import cuda

        @cuda.jit("void(float{}[:])".format(sys.argv[1]))
        def scale(d):
            d[0] = 1
        ''')
    assert "mod.py:5:11: error: signature: cannot read signature" in text


def test_a_module_array_rebound_in_straight_line_code_is_the_value_the_kernel_compiles_with():
    """A course's convolution notebook exported to .py binds its filter, then scales it (`W = 0.25 * W`): Numba
    reads the global when the kernel compiles, at its first launch; launched from outside the module (or from its
    functions), that is the module's last binding. It was "is assigned more than once at module level"."""
    src = textwrap.dedent('''
        import numpy as np
        from numba import cuda

        W = np.array([1.0, 2.0, 1.0], dtype=np.float32)
        W = 0.25 * W

        @cuda.jit("void(float32[::1], float32[::1])")
        def smooth(img, out):
            c = cuda.const.array_like(W)
            i = cuda.grid(1)
            if 0 < i < img.size - 1:
                out[i] = c[0] * img[i - 1] + c[1] * img[i] + c[2] * img[i + 1]
        ''')
    assert "__constant__ float W[3] = {0.25f, 0.5f, 0.25f};" in translate(src)
    # without a signature it compiles at its first launch: after the module ran, or at a launch the module makes
    types = parse_types_option("img=float32[::1], out=float32[::1]")
    lazy = src.replace('"void(float32[::1], float32[::1])"', "")
    assert "__constant__ float W[3] = {0.5f, 1.0f, 0.5f};" in translate(lazy + "\nW = W * 2\n", types=types)
    launched = lazy + "\nsmooth[1, 32](np.zeros(3, np.float32), np.zeros(3, np.float32))\nW = W * 2\n"
    assert "__constant__ float W[3] = {0.25f, 0.5f, 0.25f};" in translate(launched, types=types)
    # handed to a call, it may compile at any time: the value is unknown, and the import mode reads it
    text = error(lazy + "\nkernels = [smooth]\nW = W * 2\n", types=types)
    assert "'W': is assigned more than once at module level" in text and "--import-module" in text


def test_names_a_module_makes_with_globals_update_name_the_import_mode():
    """An orbit propagator makes its column indices with `globals().update({f"{n}Idx": i ...})` at import. The
    message was "unknown name 'tIdx': it is not a parameter, local variable, module constant or import", with no
    word of the import mode that reads them (run.py's retry never happened)."""
    text = error('''
        from numba import cuda
        FIELDS = ["t", "ecco"]
        globals().update({f"{n}Idx": i for i, n in enumerate(FIELDS)})

        @cuda.jit("void(float64[:, ::1], float64[::1])")
        def pick(row, out):
            i = cuda.grid(1)
            if i < out.shape[0]:
                out[i] = row[i, tIdx]
        ''')
    assert "mod.py:10:25: error: unknown name 'tIdx': no statement of this file binds it: the module makes names " \
           "when it runs (exec, globals())" in text
    assert "translate with --import-module" in text


def test_spellings_numba_reads_that_numba2cuda_refused():
    """Three refusals of kernels Numba compiles (realworld34): `cuda.jit(None, device=True)` (no signature, as
    func_or_sig=None), a signature's `nb.f8[:, ::]` (a slice with neither bounds nor step: `[:, :]`), and
    `dtype=nb.size_t` (numba.types' name of uintp)."""
    cu = translate('''
        import numba as nb
        from numba import cuda

        @cuda.jit(None, device=True)
        def bump(x):
            return x + 1.0

        @cuda.jit((nb.f8[:, ::], nb.int64[::1]))
        def k(a, out):
            idx = cuda.local.array(4, dtype=nb.size_t)
            for i in range(4):
                idx[i] = i * 2
            out[0] = idx[3] + nb.ssize_t(1)
            a[0, 0] = bump(a[0, 0])
        ''')
    assert "uint64_t idx[4];" in cu and "double bump(double x)" in cu and "__global__ void k(double *a" in cu


def test_a_kernels_cpu_twin_on_the_other_branch_leaves_the_kernel():
    """A particle pusher defines `field_function` as a cuda.jit kernel under `if _use_gpu:` and as an
    @njit(parallel=True) function under `else:`; the second definition replaced the kernel, and `--kernel
    field_function` said it "is a device function"."""
    src = '''
        import os
        import numba
        from numba import cuda

        _use_gpu = os.environ.get("USE_GPU", "1") == "1"

        if _use_gpu:
            @cuda.jit("void(float64[::1], float64[::1])")
            def scale(x, out):
                i = cuda.grid(1)
                if i < x.shape[0]:
                    out[i] = 2 * x[i]
        else:
            @numba.njit(parallel=True)
            def scale(x, out):
                for i in numba.prange(x.shape[0]):
                    out[i] = 2 * x[i]
        '''
    assert kernels(src, kernels=["scale"]) == ["scale"]
    assert "out[i] = 2 * x[i];" in translate(src, kernels=["scale"])


def test_a_tuple_type_made_of_a_list_of_types():
    """`types.Tuple([boolean, float64])` (an ODE solver's result type) is one argument to Numba, as a tuple is."""
    cu = translate('''
        import numba as nb
        from numba import cuda

        @cuda.jit(nb.types.Tuple([nb.boolean, nb.float64])(nb.float64[:], nb.int32), device=True)
        def check(a, i):
            return a[i] > 0.0, a[i] * 2.0

        @cuda.jit("void(float64[::1], float64[::1])")
        def k(a, out):
            i = cuda.grid(1)
            if i < a.shape[0]:
                ok, v = check(a, i)
                out[i] = v if ok else -1.0
        ''')
    assert "check(" in cu and "__global__ void k(" in cu


def test_a_decorator_factory_may_name_the_signature_func_or_sig():
    """A ray tracer's `def typed_kernel(signature): ... return cuda.jit(func_or_sig=signature, device=False)(fun)`:
    func_or_sig is cuda.jit's first parameter by its name; it was reported as an option numba-cuda lacks."""
    src = """
        from numba import cuda


        def typed_kernel(signature):
            def inner(fun):
                return cuda.jit(func_or_sig=signature, device=False)(fun)
            return inner


        @typed_kernel("void(float32[:], float32)")
        def scale(x, a):
            i = cuda.grid(1)
            if i < x.shape[0]:
                x[i] *= a
    """
    assert "__global__ void scale(float *x, int64_t x_shape0, float a)" in translate(src)


def test_a_signature_a_decorator_builds_when_it_runs_is_left_to_types():
    """A ray tracer's decorator builds the signature from each function's annotations when it runs
    (`signature += type_mapping[annot] + ", "`): that local could not be read, and the kernel was refused
    ("cannot read signature 'signature'") even with --types. The types now come from --types, as for a kernel
    Numba compiles at its first launch."""
    src = """
        from numba import cuda


        def auto_typed(device=True):
            mapping = {int: "int32", float: "float32"}

            def inner(fun):
                signature = ""
                for what, annot in fun.__annotations__.items():
                    if what != "return":
                        signature += mapping[annot] + ", "
                return cuda.jit(func_or_sig=signature, device=device)(fun)
            return inner


        @auto_typed(device=False)
        def fill(out, value: float):
            i = cuda.grid(1)
            if i < out.shape[0]:
                out[i] = value
    """
    assert "__global__ void fill(float *out, int64_t out_shape0, float value)" in translate(
        src, types=parse_types_option("out=float32[:], value=float32"))
    assert "without types: its signature names 'signature', which is computed when the decorator that applies " \
        "cuda.jit runs" in error(src)


def test_a_function_compiled_ahead_of_time_is_a_kernel_or_device_function_of_that_signature():
    """numba-cuda's compiler tests compile functions with cuda.compile_ptx (a kernel unless device=True) and
    cuda.compile (a device function unless device=False): `--kernel` of one was "no kernel named ...", no reason."""
    src = textwrap.dedent("""
        from numba import cuda, float32, int32


        def test_ptx():
            def f(x, v):
                x[cuda.grid(1)] = v

            ptx, resty = cuda.compile_ptx(f, (int32[::1], int32), lineinfo=True, cc=(9, 0))


        def test_device():
            def add(a, b):
                return a + b

            code, resty = cuda.compile(add, "float32(float32, float32)", abi="c", output="ltoir")
    """)
    cu = translate(src, kernels=["f"])
    assert "__global__ void f(int *x, int v)" in cu
    cu = translate(src, kernels=["add"], device_code_alone=True)
    assert "__device__ float add(float a, float b)" in cu
