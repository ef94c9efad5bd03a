"""--import-module, continued: kernels made or first launched where only the module's own code reaches (a test
method, a helper a test calls, a factory a test calls, main()) are seen as Numba sees them, at their first launch:
with that launch's argument types and the values their free names hold then. The tests and drivers run in the
import mode's child under the CUDA simulator, and each stops at the launch it was run for."""

from __future__ import annotations

import textwrap
import time

import pytest

from translator.cli import main
from translator.frontend.entries import MAIN_BLOCK, plan

TESTS = """
    import unittest

    import numpy as np
    from numba import cuda


    class TestScale(unittest.TestCase):
        def _check(self, arr):
            n = len(arr)
            scale = arr.dtype.type(3)

            @cuda.jit
            def triple(x, y):
                i = cuda.grid(1)
                if i < x.size:
                    y[i] = x[i] * scale

            out = np.zeros_like(arr)
            triple[1, n](arr, out)
            np.testing.assert_array_equal(out, arr * 3)

        def test_int(self):
            self._check(np.arange(8, dtype=np.int32))

        @unittest.skipIf(True, "skipped where it is run: numba2cuda runs the test itself")
        def test_float(self):
            self._check(np.arange(8, dtype=np.float32))


    if __name__ == "__main__":
        unittest.main()
"""


UNITTEST = "import unittest\nimport numpy as np\nfrom numba import cuda\n"


def write(tmp_path, text, name="mod.py"):
    """TEXT, dedented after its first line of imports (UNITTEST) if it starts with one, as tmp_path/NAME."""
    path = tmp_path / name
    first, rest = (UNITTEST, text[len(UNITTEST):]) if text.startswith(UNITTEST) else ("", text)
    path.write_text(first + textwrap.dedent(rest))
    return path


def translate(capsys, *args) -> tuple[int, str]:
    rc = main(["translate", *map(str, args)])
    return rc, capsys.readouterr().err


def imported(capsys, path, *args) -> str:
    """The .cu `translate --import-module PATH ARGS` writes, which must succeed."""
    out = path.parent / "out.cu"
    rc, err = translate(capsys, path, "--import-module", *args, "-o", out)
    assert rc == 0, err
    return out.read_text()


def test_a_kernel_made_in_a_test_is_translated_as_its_first_launch_compiled_it(tmp_path, capsys):
    path = write(tmp_path, TESTS)
    out = tmp_path / "out.cu"
    rc, err = translate(capsys, path, "--kernel", "TestScale._check.triple", "-o", out)
    assert rc == 2 and "kernel 'triple' without types" in err
    assert "translate with --import-module: numba2cuda then imports the module, runs 'TestScale.test_int' (or, if " \
           "that does not launch it, 1 other that reaches it)" in err
    rc, err = translate(capsys, path, "--import-module", "--kernel", "TestScale._check.triple", "-o", out)
    assert rc == 0, err
    text = out.read_text()
    assert "__global__ void triple(const int *x, int64_t x_shape0, int *y)" in text  # test_int's int32 arrays
    assert "static constexpr int scale = 3;" in text
    assert "Translated by rules, from the imported module's values." in text
    # --types picks the launch that has them: test_float's (run past its skip decorator), with its float scale
    rc, err = translate(capsys, path, "--import-module", "--kernel", "triple", "--types",
                        "x=float32[::1], y=float32[::1]", "-o", out)
    assert rc == 0, err
    text = out.read_text()
    assert "__global__ void triple(const float *x, int64_t x_shape0, float *y)" in text
    assert "static constexpr float scale = 3.0f;" in text


def test_a_factory_a_test_calls_with_an_operator(tmp_path, capsys):
    # numba-cuda's operator tests: `op` is operator.add, a builtin of _operator, which a kernel calls as `+`
    path = write(tmp_path, """
        import operator
        import unittest
        import numpy as np
        from numba import cuda

        def operator_template(op):
            @cuda.jit
            def apply(a, b):
                i = cuda.grid(1)
                if i < a.size:
                    a[i] = op(a[i], b[i])
            return apply

        class TestOperators(unittest.TestCase):
            def test_sub(self):
                a, b = np.ones(4), np.ones(4)
                operator_template(operator.sub)[1, 4](a, b)
    """)
    out = tmp_path / "out.cu"
    rc, err = translate(capsys, path, "--kernel", "apply", "--types", "a=float64[::1], b=float64[::1]", "-o", out)
    assert rc == 2 and "'op' is a parameter of 'operator_template'" in err
    assert "runs 'TestOperators.test_sub'" in err
    rc, err = translate(capsys, path, "--import-module", "--kernel", "apply", "-o", out)
    assert rc == 0, err
    assert "a[i] -= b[i];" in out.read_text()


def test_a_scripts_main_is_stopped_at_the_launch_it_was_run_for(tmp_path, capsys):
    # a million threads would take the simulator minutes: the launch is seen, and the script stops there
    path = write(tmp_path, """
        import numpy as np
        from numba import cuda

        @cuda.jit
        def saxpy(a, x, y):
            i = cuda.grid(1)
            if i < x.size:
                y[i] = a * x[i] + y[i]

        def main():
            n = 1 << 20
            x = np.ones(n, dtype=np.float32)
            y = np.zeros(n, dtype=np.float32)
            saxpy[n // 256, 256](np.float32(2), x, y)
            raise SystemExit("the launch must not have run")

        if __name__ == "__main__":
            main()
    """)
    assert plan(path.read_text()).reaches == {"saxpy": ["main", MAIN_BLOCK]}
    out = tmp_path / "out.cu"
    started = time.monotonic()
    rc, err = translate(capsys, path, "--import-module", "-o", out)
    assert rc == 0, err
    assert time.monotonic() - started < 60
    assert "__global__ void saxpy(float a, const float *x, int64_t x_shape0, float *y)" in out.read_text()


def test_a_run_that_never_reaches_the_launch_says_what_it_did(tmp_path, capsys):
    path = write(tmp_path, UNITTEST + """
        class TestBroken(unittest.TestCase):
            def test_it(self):
                @cuda.jit
                def k(a):
                    a[0] = 1
                assert False, "fails before its launch"
                k[1, 1](np.zeros(1))
    """)
    rc, err = translate(capsys, path, "--import-module", "--kernel", "k", "-o", tmp_path / "out.cu")
    assert rc == 2 and "kernel 'k' without types" in err
    assert "the import mode ran the code that reaches it, and no launch gave it: 'TestBroken.test_it' raised " \
           "AssertionError (fails before its launch)" in err  # what the exception says, not its class alone
    # a test the simulator skips runs on Numba's real target: the hint names the flag for it
    path.write_text(path.read_text().replace('assert False, "fails before its launch"',
                                             'raise unittest.SkipTest("no simulator support")'))
    rc, err = translate(capsys, path, "--import-module", "--kernel", "k", "-o", tmp_path / "out.cu")
    assert rc == 2 and "'TestBroken.test_it' skipped (no simulator support); make that code run under the CUDA " \
        "simulator, or translate with --import-module-gpu on a machine with a GPU" in err
    # a module that does not import: the hint says so, rather than naming the flag already given
    path.write_text("import numba_n2c_absent.sub as harness\nharness.setup(int(harness.LEVEL))\n" + path.read_text())
    rc, err = translate(capsys, path, "--import-module", "--kernel", "k", "-o", tmp_path / "out.cu")
    assert rc == 2 and "note: --import-module: importing the module stopped: the module uses the value of" in err \
        and "StandInDecided" not in err
    assert "hint: --import-module would run 'TestBroken.test_it', which reaches it, but importing the module " \
           "failed (the note says why)" in err


def test_a_device_function_of_a_file_the_import_reaches(tmp_path, capsys):
    # a test's use cases live in a module on the path, not next to the test: the dispatcher says where its
    # source is, and that file is read as a module next to it would be
    (tmp_path / "lib").mkdir()
    write(tmp_path / "lib", """
        def conj(z):
            return z.conjugate()
    """, "usecases.py")
    path = write(tmp_path, """
        import os
        import sys
        import numpy as np
        from numba import cuda, complex64, complex128

        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
        from usecases import conj

        dev = cuda.jit(complex64(complex64), device=True)(conj)

        @cuda.jit
        def apply(out, a):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = dev(a[i])

        def test_apply():
            a = np.ones(4, dtype=np.complex128)
            out = np.zeros(4, dtype=np.complex128)
            apply[1, 4](out, a)
    """)
    text = imported(capsys, path, "--kernel", "apply")
    assert "// usecases.py:2" in text
    # Numba converts the complex128 argument to the signature's complex64; C++ is told to
    assert "out[i] = dev(n2c::complex64(a[i]));" in text


@pytest.mark.parametrize("source, expected", [
    ("def helper():\n    pass\n", {}),
    ("from numba import cuda\n@cuda.jit('void(int32[:])')\ndef k(a):\n    a[0] = 1\n", {}),
    ("from numba import cuda\nclass T:\n    run = None\n    def check(self):\n"
     "        k = cuda.jit(lambda a: None)\n    alias = check\n    def test_a(self):\n        self.alias()\n",
     {}),
    ("from numba import cuda\nclass T:\n    def check(self):\n        @cuda.jit\n        def k(a):\n"
     "            a[0] = 1\n    alias = check\n    def test_a(self):\n        self.alias()\n"
     "    def test_b(self, x):\n        self.check()\n",
     {"T.check": ["T.test_a"]}),
])
def test_the_entry_points_that_reach_a_kernel(source, expected):
    # a class attribute bound to a helper (`run_unary = run_func`) reaches it; a test that takes arguments is
    # not called; a kernel compiled at import with a signature waits for nothing
    assert plan(source).reaches == expected


def test_what_the_source_tells_of_a_tests_kernel_stays_under_the_import_mode(tmp_path, capsys):
    # imports inside the test, a kernel it calls as a device function, and numba.cuda.random's states, whose
    # record type the launch gives: as reading the source knows them, with the run's types on top
    path = write(tmp_path, UNITTEST + """
        class TestRandom(unittest.TestCase):
            def test_draws(self):
                from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

                @cuda.jit
                def bump(x):
                    x[0] += 1

                @cuda.jit
                def draw(out, states):
                    i = cuda.grid(1)
                    if i < out.size:
                        out[i] = xoroshiro128p_uniform_float32(states, i)
                    if i == 0:
                        bump(out)

                states = create_xoroshiro128p_states(4, seed=1)
                out = np.zeros(4, dtype=np.float32)
                draw[1, 4](out, states)
    """)
    text = imported(capsys, path, "--kernel", "draw")
    assert "__device__ void bump(float *x" in text and "bump(out, out_shape0);" in text
    assert "out[i] = n2c::xoroshiro128p_uniform_float32(&states[i]);" in text


@pytest.mark.gpu
def test_on_the_gpu_a_tests_kernel_is_seen_at_its_real_launch_and_runs_as_it_did(tmp_path):
    # --import-module-gpu: Numba's real target, whose launches the run sees too; the drop-in kernel the test's
    # launch defines computes what the test asserts (out == arr * 3)
    import torch
    import numba2cuda

    path = write(tmp_path, TESTS)
    module = numba2cuda.load(str(path), backend="rules", kernels=["TestScale._check.triple"], import_module="gpu",
                             progress=False)
    x = torch.arange(-8, 8, dtype=torch.int32, device="cuda")
    out = torch.zeros_like(x)
    module.triple[1, 16](x, out)
    torch.cuda.synchronize()
    assert torch.equal(out, x * 3)


def test_a_pytest_test_is_run_with_its_first_parametrized_case(tmp_path, capsys):
    path = write(tmp_path, """
        import numpy as np
        import pytest
        from numba import cuda

        @pytest.mark.parametrize("dtype, n", [(np.float32, 8), pytest.param(np.int64, 4)])
        @pytest.mark.parametrize("scale", [3])
        def test_scale(dtype, n, scale):
            @cuda.jit
            def scaled(x):
                i = cuda.grid(1)
                if i < x.size:
                    x[i] *= scale
            scaled[1, n](np.ones(n, dtype=dtype))
    """)
    assert plan(path.read_text()).reaches == {"test_scale": ["test_scale"]}
    text = imported(capsys, path, "--kernel", "scaled")
    assert "__global__ void scaled(float *x, int64_t x_shape0)" in text  # the first case: float32, scale 3
    assert "static constexpr int64_t scale = 3;" in text and "x[i] = (double)x[i] * scale;" in text


def test_a_signature_a_loop_gives_comes_from_the_run(tmp_path, capsys):
    # numba-cuda's warp tests compile one function per signature of a list: the source cannot know which; the
    # hint names the test, and the run gives the first (the message was "cannot read signature 'sig'")
    path = write(tmp_path, UNITTEST + """
        def vote(mask, result):
            i = cuda.grid(1)
            result[i] = cuda.all_sync(mask[i], 1)

        class TestVote(unittest.TestCase):
            def test_types(self):
                for sig, dtype in [("void(uint32[:], int32[:])", np.uint32), ("void(int64[:], int32[:])", np.int64)]:
                    compiled = cuda.jit(sig)(vote)
                    compiled[1, 4](np.ones(4, dtype=dtype), np.zeros(4, dtype=np.int32))
    """)
    rc, err = translate(capsys, path, "--kernel", "vote", "-o", tmp_path / "out.cu")
    assert rc == 2 and "kernel 'vote' without types" in err and "runs 'TestVote.test_types'" in err
    assert "cannot read signature" not in err
    text = imported(capsys, path, "--kernel", "vote")
    assert "// kernel vote(mask: uint32[:], result: int32[:])" in text  # the first signature of the list


def test_a_global_only_the_scripts_main_block_sets_is_read_at_the_launch(tmp_path, capsys):
    # a flash-attention script picks its dtype in its `__main__` block, which importing does not run: with --types
    # given, the kernel was taken as finished at the import, and DT was unknown
    path = write(tmp_path, """
        import numpy as np
        from numba import cuda

        @cuda.jit
        def stage(x):
            buf = cuda.shared.array(0, dtype=DT)
            i = cuda.threadIdx.x
            buf[i] = x[i]
            cuda.syncthreads()
            x[i] = buf[(i + 1) % x.size]

        def pick(name):
            return {"float32": np.float32, "float64": np.float64}[name]

        if __name__ == "__main__":
            DT = pick("float32")
            x = cuda.to_device(np.arange(8, dtype=DT))
            stage[1, 8, 0, 32](x)
    """)
    text = imported(capsys, path, "--types", "x=float32[::1]")
    assert "float *buf = reinterpret_cast<float *>(n2c_dynamic_smem);" in text


def test_a_0d_array_a_test_launches_with_is_typed_as_numba_types_it(tmp_path, capsys):
    """`r = np.ndarray((), dtype=np.float32)` passed to a kernel (numba-cuda's from_buffer doc example): the launch
    gives array(float32, 0d, C), which is `float32[()]`, and `r[()]` is its one element (was "array dimensions
    must be ':' or '::1', got '[]'")."""
    path = write(tmp_path, UNITTEST + """
        class TestSum(unittest.TestCase):
            def test_sum(self):
                @cuda.jit
                def total(result, values):
                    s = 0.0
                    for i in range(len(values)):
                        s += values[i]
                    result[()] = s

                r = np.ndarray((), dtype=np.float32)
                total[1, 1](r, np.arange(10, dtype=np.float32))
                self.assertEqual(r[()], 45.0)
        """)
    cu = imported(capsys, path, "--kernel", "TestSum.test_sum.total")
    assert "// kernel total(result: float32[()], values: float32[::1])" in cu
    assert "result[0] = s;" in cu


def test_a_package_a_test_imports_and_is_not_installed_is_stood_in_for(tmp_path, capsys):
    """numba-cuda's from_buffer example imports cffi inside the test: where cffi is not installed, the run stands
    in for it as the import does for a missing package, reaches the launch, and the note points at that import
    (was: "'TestFFI.test_ex_from_buffer' raised ModuleNotFoundError" and no types)."""
    path = write(tmp_path, UNITTEST + """
        class TestIt(unittest.TestCase):
            def test_it(self):
                import n2c_not_installed_anywhere as helper
                tool = helper.Tool()

                @cuda.jit
                def fill(x):
                    x[cuda.grid(1)] = 2

                fill[1, 4](np.zeros(4, np.int64))
        """)
    out = tmp_path / "out.cu"
    rc, err = translate(capsys, path, "--import-module", "--kernel", "TestIt.test_it.fill", "-o", out)
    assert rc == 0, err
    assert "// kernel fill(x: int64[::1])" in out.read_text()
    assert "mod.py:7:9: note: import of n2c_not_installed_anywhere: n2c_not_installed_anywhere is not installed " \
           "here, so the import mode stood in for it;" in err


def test_a_kernel_a_helper_compiles_from_its_argument_is_named_where_it_is_defined(tmp_path, capsys):
    """numba-cuda's fastmath tests define `kernel` in one helper and compile it in another (`cuda.jit(sig,
    fastmath=True)(pyfunc)`): the run makes it, and --kernel names it by where it is defined, as everywhere else
    (was "no kernel named ... (kernels here: kernel, kernel_2)", a name no --kernel could reach)."""
    path = write(tmp_path, UNITTEST + """
        from numba import float32


        class TestFast(unittest.TestCase):
            def _compile(self, pyfunc, sig):
                fast = cuda.jit(sig, fastmath=True)(pyfunc)
                fast.no_such_method_under_the_simulator()

            def _binary(self, op):
                def kernel(r, x, y):
                    r[0] = op(x, y)

                self._compile(kernel, (float32[::1], float32, float32))

            def test_pow(self):
                self._binary(pow)
        """)
    cu = imported(capsys, path, "--kernel", "TestFast._binary.kernel")
    assert "// kernel kernel(r: float32[::1], x: float32, y: float32)" in cu
    assert "r[0] = powf(x, y);" in cu


def test_a_function_of_this_file_that_cannot_be_translated_is_not_said_to_be_in_another_file(tmp_path, capsys):
    """A kernel a factory makes calls the dispatcher it was given, a @cuda.jit of this very file that takes
    *args (numba-cuda's make_function tests): the error says that function is of this file and why it is refused
    (was "'apply', defined in .../mod.py, which numba2cuda does not read")."""
    path = write(tmp_path, UNITTEST + """
        @cuda.jit
        def apply(func, *args):
            return func(*args)


        def wrap(func):
            @cuda.jit
            def kernel(out, x):
                out[0] = func(x)
            return kernel


        class TestIt(unittest.TestCase):
            def test_it(self):
                out = np.zeros(1, np.int64)
                wrap(apply)[1, 1](out, 3)
        """)
    rc, err = translate(capsys, path, "--import-module", "--kernel", "wrap.kernel", "-o", tmp_path / "out.cu")
    assert rc == 2
    assert "mod.py:13:18: error: call to func(): 'func' is 'apply' of this file, which numba2cuda cannot translate " \
           "as a device function (" in err
    assert "does not read" not in err


SCRIPT = """
    import numpy as np
    from numba import cuda


    @cuda.jit
    def double(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= 2


    SCALE = np.float32(3)


    @cuda.jit
    def scale(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= SCALE


    data = np.arange(10 ** 6, dtype=np.float32)
    for step in range(1000):
        double[4096, 256](data)
    SCALE = np.float32(5)
    scale[4096, 256](data.reshape(1000, 1000)[0])
    print(float(data[1]))
"""


def test_a_script_that_launches_at_its_top_level_gives_each_kernel_its_first_launchs_types(tmp_path, capsys):
    """A tutorial script launches its kernels as it runs, outside any function: without types, the hint names the
    import mode and the launch's line, and the import mode reads that launch's types and the globals as they
    are then (SCALE after its reassignment), without running a launch (a million elements a thousand times would
    take the simulator hours). Was: the same "without types" error with the flag as without it."""
    path = write(tmp_path, SCRIPT)
    rc, err = translate(capsys, path, "--kernel", "double", "-o", tmp_path / "out.cu")
    assert rc == 2 and "hint: translate with --import-module: numba2cuda then imports the module as Numba would " \
        "and reads the types of its launch at line 25 (the launch itself is not run)" in err
    started = time.monotonic()
    cu = imported(capsys, path)
    assert time.monotonic() - started < 60
    assert "__global__ void double_2(float *x, int64_t x_shape0)" in cu
    assert "SCALE = 5.0f" in cu and "__global__ void scale(float *x, int64_t x_shape0)" in cu


TEMPLATE = UNITTEST + '''
    from textwrap import dedent
    from numba import float64


    def make(func):
        text = dedent("""
        def accumulate(res, ary):
            tx = cuda.threadIdx.x
            {func}(res, 0, ary[tx])
        """).format(func=func)
        ld = {}
        exec(text, {"cuda": cuda}, ld)
        return ld["accumulate"]


    atomic_max_of = make("cuda.atomic.max")
    atomic_min_of = make("cuda.atomic.min")


    class TestTemplate(unittest.TestCase):
        def test_max(self):
            kernel = cuda.jit("void(float64[:], float64[:])")(atomic_max_of)
            res = np.zeros(1)
            kernel[1, 4](res, np.arange(4.0))

        def test_min(self):
            kernel = cuda.jit("void(float64[:], float64[:])")(atomic_min_of)
            res = np.zeros(1)
            kernel[1, 4](res, np.arange(4.0))
'''


def test_a_kernel_a_template_makes_with_exec_is_read_from_the_string_exec_ran(tmp_path, capsys):
    """numba-cuda's atomics tests make kernels by exec() of a template, one per atomic (max, min, nanmax, ...),
    and compile them in tests: each is read from the string that made it, told apart by its code (one name, one
    line, four functions), and its C names where it ran (was "no kernel named atomic_max")."""
    path = write(tmp_path, TEMPLATE)
    for name, call in (("atomic_max_of", "n2c::atomic_max(&res[0], ary[tx]);"),
                       ("atomic_min_of", "n2c::atomic_min(&res[0], ary[tx]);")):
        cu = imported(capsys, path, "--kernel", name)
        assert f"// kernel {name}(res: float64[:], ary: float64[:])" in cu
        assert f"    {call}  // <exec at mod.py:16>:4" in cu


def test_types_naming_one_kernels_parameters_choose_among_kernels_of_one_name(tmp_path, capsys):
    """numba-cuda's complex tests define `kernel_func(out, a)` or `kernel_func(out, a, b)` by the case, and run
    both: --types naming out, a and b is the second (was "several kernels are named 'kernel_func' here")."""
    path = write(tmp_path, UNITTEST + """
        def compile_func(arity):
            if arity == 1:
                def kernel_func(out, a):
                    out[0] = a[0]
            else:
                def kernel_func(out, a, b):
                    out[0] = a[0] + b[0]
            return cuda.jit(kernel_func)


        class TestArity(unittest.TestCase):
            def test_both(self):
                x = np.ones(1, np.float32)
                compile_func(1)[1, 1](x, x)
                compile_func(2)[1, 1](x, x, x)
        """)
    cu = imported(capsys, path, "--kernel", "kernel_func", "--types", "out=float32[::1], a=float32[::1], "
                  "b=float32[::1]")
    assert "out[0] = a[0] + b[0];" in cu
    rc, err = translate(capsys, path, "--import-module", "--kernel", "kernel_func", "--types", "out=float32[::1]",
                        "-o", tmp_path / "out.cu")
    assert rc == 2 and "several kernels are named 'kernel_func'" in err
    assert "or --types naming the parameters of one" in err


def test_a_plain_function_of_this_file_a_kernel_calls_is_said_to_need_an_extension(tmp_path, capsys):
    """numba-cuda's overload tests call a stub of the test file that an @overload implements: where the overload picks
    its implementation by the types, the error names the function as this file's plain function and the extension
    it needs (was "it comes from mod, which numba2cuda does not read ... define the device function in this file",
    which it is). Where it returns one implementation whatever the types, that implementation is translated."""
    source = UNITTEST + """
        from numba.core import types
        from numba.core.extending import overload


        def bump(x):
            pass


        @overload(bump, target="cuda")
        def ol_bump(x):
            if isinstance(x, types.Array):
                def impl(x):
                    x[0] += 1
                return impl


        class TestIt(unittest.TestCase):
            def test_it(self):
                @cuda.jit
                def kernel(x):
                    bump(x)

                kernel[1, 1](np.zeros(1, np.int64))
        """
    path = write(tmp_path, source)
    rc, err = translate(capsys, path, "--import-module", "--kernel", "TestIt.test_it.kernel", "-o",
                        tmp_path / "out.cu")
    assert rc == 2
    assert "error: call to bump(): 'bump' is a plain Python function of this file (not @cuda.jit): a kernel calls " \
           "it only through an extension registered for it (@overload, @intrinsic)" in err
    assert "does not read" not in err
    one = source.replace("            if isinstance(x, types.Array):\n", "").replace("                def impl",
                                                                                      "            def impl")
    one = one.replace("                    x[0] += 1\n                return impl", "                x[0] += 1\n            return impl")
    path = write(tmp_path, one)
    rc, err = translate(capsys, path, "--import-module", "--kernel", "TestIt.test_it.kernel", "-o",
                        tmp_path / "out.cu")
    assert rc == 0, err
    assert "x[0] += 1;" in (tmp_path / "out.cu").read_text()


def test_a_value_a_script_computes_from_a_launchs_results_is_computed_with_them(tmp_path, capsys):
    """A script that sets a global from what a launch counted (`LIMIT = np.float32(hits[0])`) and then launches a
    kernel that reads it: the import mode, which skips top-level launches, imports it again with them run, so the
    constant is Numba's (4, not the 0 of a launch never run)."""
    path = write(tmp_path, """
        import numpy as np
        from numba import cuda


        @cuda.jit
        def count(x, out):
            i = cuda.grid(1)
            if i < x.size and x[i] > 0:
                cuda.atomic.add(out, 0, 1)


        @cuda.jit
        def scale(x):
            i = cuda.grid(1)
            if i < x.size:
                x[i] *= LIMIT


        data = np.arange(-5, 5, dtype=np.float32)
        hits = np.zeros(1, np.int64)
        count[1, 32](data, hits)
        LIMIT = np.float32(hits[0])
        scale[1, 32](data)
        """)
    cu = imported(capsys, path)
    assert "static constexpr float LIMIT = 4.0f;" in cu
    # the same script as a notebook's cell (an IPython magic first): the parent reads it as the child imported it
    path.write_text("%matplotlib inline\n" + path.read_text())
    assert "static constexpr float LIMIT = 4.0f;" in imported(capsys, path)


def test_a_script_that_checks_a_launchs_result_as_it_runs_is_imported_with_its_launches_run(tmp_path, capsys):
    """`assert data[3] == 6` after a top-level launch fails when the launch is skipped: the import mode imports the
    module again with its launches run, as Numba runs it, rather than falling back to the source alone."""
    path = write(tmp_path, """
        import numpy as np
        from numba import cuda


        @cuda.jit
        def double(x):
            i = cuda.grid(1)
            if i < x.size:
                x[i] *= 2


        data = np.arange(8, dtype=np.float32)
        double[1, 32](data)
        assert data[3] == 6, "the script checks its result"
        """)
    rc, err = translate(capsys, path, "--import-module", "-o", tmp_path / "out.cu")
    assert rc == 0 and "importing the module raised" not in err, err
    assert "__global__ void double_2(float *x, int64_t x_shape0)" in (tmp_path / "out.cu").read_text()


def test_a_device_array_a_loop_makes_is_captured_with_its_launchs_shape_and_type(tmp_path, capsys):
    """numba-cuda's device-array capture tests make the captured array in a loop over array factories: the run
    describes it as a device array (shape, element type), which the kernel takes as a pointer after its own
    arguments, as Numba captures it (was "closure variable 'global_direct': is assigned in a loop")."""
    path = write(tmp_path, UNITTEST + """
        class TestCapture(unittest.TestCase):
            def test_direct(self):
                for scale in (2, 3):
                    global_direct = cuda.to_device(np.arange(3, dtype=np.float32) * scale)

                    @cuda.jit
                    def direct_access_kernel(output):
                        i = cuda.grid(1)
                        if i < output.size:
                            output[i] = global_direct[i] + 1.0

                    direct_access_kernel[1, 3](np.zeros(3, np.float32))
        """)
    cu = imported(capsys, path, "--kernel", "TestCapture.test_direct.direct_access_kernel")
    assert "__global__ void direct_access_kernel(float *output, int64_t output_shape0, const float *global_direct)" \
        in cu


def test_a_top_level_launch_of_values_of_a_missing_package_says_to_install_it(tmp_path, capsys):
    """numba-cuda's CUDA Array Interface doc snippet launches on cupy arrays: where cupy is not installed the
    import stands in for it, the launch's arguments have no type, and the hint says so and to install it (was
    the plain "the types of x, y, out are unknown")."""
    path = write(tmp_path, """
        import n2c_missing_cupy as cupy
        from numba import cuda


        @cuda.jit
        def add(x, y, out):
            i = cuda.grid(1)
            if i < x.shape[0]:
                out[i] = x[i] + y[i]


        a = cupy.arange(10)
        add[1, 32](a, a, a)
        """)
    rc, err = translate(capsys, path, "--import-module", "-o", tmp_path / "out.cu")
    assert rc == 2
    assert "hint: the import reached its launch at line 14, whose arguments are values of n2c_missing_cupy, which " \
           "is not installed here and stood in for: install it where numba2cuda runs" in err


def test_cupy_where_it_is_not_installed_is_numpy_to_the_import(tmp_path, capsys):
    """The same snippet with CuPy itself: CuPy mirrors NumPy's arrays, so where it is not installed the import
    stands NumPy in for it, and the launch is typed as Numba types CuPy's arrays (int64 from cupy.arange). Its
    CUDA-only parts (cupy.cuda) stay stand-ins. It was "the types of x, y, out are unknown"."""
    import importlib.util

    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("cupy is installed here: the import uses the real one")
    path = write(tmp_path, """
        import cupy
        from numba import cuda


        @cuda.jit
        def add(x, y, out):
            start = cuda.grid(1)
            stride = cuda.gridsize(1)
            for i in range(start, x.shape[0], stride):
                out[i] = x[i] + y[i]


        a = cupy.arange(10)
        b = a * 2.5
        out = cupy.zeros_like(b)
        stream = cupy.cuda.Stream()
        add[1, 32](a, b, out)
        """)
    out = tmp_path / "out.cu"
    rc, err = translate(capsys, path, "--import-module", "-o", out)
    assert rc == 0, err
    assert "note: import of cupy: cupy is not installed here, so the import mode stood NumPy in for it" in err
    assert "__global__ void add(const int64_t *x, int64_t x_shape0, const double *y, double *out)" in out.read_text()


@pytest.mark.parametrize("decorator, imports", [
    ("@cuda.jit(fastmath=True)", "from numba import cuda"),
    ('@cuda.jit(target="gpu")', "from numbapro import cuda"),
])
def test_a_kernel_decorated_with_options_only_is_typed_at_its_launch(tmp_path, capsys, decorator, imports):
    """`@cuda.jit(fastmath=True)` (or an old tutorial's NumbaPro `@cuda.jit(target="gpu")`) has no signature, as
    `@cuda.jit` has none: the import mode took the call for a signature and never ran the `__main__` block that
    launches it, so the kernel stayed untyped."""
    path = write(tmp_path, f"""
        import numpy as np
        {imports}


        {decorator}
        def scale(a, out):
            i = cuda.grid(1)
            if i < a.shape[0]:
                out[i] = a[i] * 2


        if __name__ == "__main__":
            a = np.arange(10, dtype=np.float32)
            out = np.zeros_like(a)
            scale[1, 32](a, out)
        """)
    out = tmp_path / "out.cu"
    rc, err = translate(capsys, path, "--import-module", "-o", out)
    assert rc == 0, err
    assert "// kernel scale(a: float32[::1], out: float32[::1])" in out.read_text()
