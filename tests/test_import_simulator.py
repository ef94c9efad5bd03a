"""--import-module runs tests under numba-cuda's CUDA simulator: where the simulator departs from the GPU
target before the launch the import mode waits for, numba2cuda makes it do what the GPU does
(frontend/simulator.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from translator.cli import main

pytest.importorskip("numba.cuda")


def translate(capsys, path, *args):
    out = path.parent / "out.cu"
    rc = main(["translate", str(path), "--import-module", *map(str, args), "-o", str(out)])
    err = capsys.readouterr().err
    return rc, err, out.read_text() if rc == 0 else ""


def test_a_kernel_after_one_reading_cuda_from_the_tests_closure_is_reached(tmp_path, capsys):
    # numba-cuda's documentation style: cuda imported in the test, so the kernels read it from a closure cell,
    # which the simulator did not swap: the first kernel failed at cuda.grid and the second was never launched
    path = tmp_path / "test_doc.py"
    path.write_text(textwrap.dedent("""
        import unittest


        class TestDoc(unittest.TestCase):
            def test_two_kernels(self):
                import numpy as np
                from numba import cuda

                @cuda.jit
                def first(a):
                    i = cuda.grid(1)
                    if i < a.size:
                        a[i] += 1

                @cuda.jit
                def helper_of_second(x):
                    return x * cuda.blockDim.x

                @cuda.jit
                def second(a, b):
                    i = cuda.grid(1)
                    if i < a.size:
                        b[i] = helper_of_second(a[i])

                a = np.zeros(8, dtype=np.float32)
                first[2, 4](a)
                np.testing.assert_array_equal(a, 1)
                b = np.zeros(8, dtype=np.float64)
                second[2, 4](a, b)
    """))
    rc, err, text = translate(capsys, path, "--kernel", "second")
    assert rc == 0, err
    assert "__global__ void second(const float *a, int64_t a_shape0, double *b)" in text


def test_a_million_random_states_made_before_the_launch_are_made_in_time(tmp_path, capsys):
    # numba-cuda's Monte Carlo example: under the simulator the states were made in object mode, minutes for
    # 10**6, and the import mode stopped the test after 20 s without reaching the launch
    path = tmp_path / "test_mc.py"
    path.write_text(textwrap.dedent("""
        import numpy as np
        from numba import cuda
        from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32


        @cuda.jit
        def draw(out, states):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = xoroshiro128p_uniform_float32(states, i)


        def test_draw():
            n = 1_000_000
            out = cuda.to_device(np.zeros(n, dtype=np.float32))
            states = create_xoroshiro128p_states(n, seed=7)
            draw.forall(n)(out, states)
    """))
    rc, err, text = translate(capsys, path)
    assert rc == 0, err
    assert "__global__ void draw(float *out, int64_t out_shape0, n2c::xoroshiro128p_state *states" in text


def test_random_states_made_under_the_simulator_are_numbas_own(tmp_path):
    """The nopython copies give the very states the GPU target's create_xoroshiro128p_states gives."""
    from numba.cuda.random import init_xoroshiro128p_states_cpu, xoroshiro128p_dtype

    expected = np.empty(5, dtype=xoroshiro128p_dtype)
    init_xoroshiro128p_states_cpu(expected, 1234, 2)
    child = textwrap.dedent("""
        import json
        from translator.frontend.simulator import patch_simulator
        patch_simulator()
        from numba.cuda.random import create_xoroshiro128p_states
        states = create_xoroshiro128p_states(5, seed=1234, subsequence_start=2).copy_to_host()
        print(json.dumps([[int(s["s0"]), int(s["s1"])] for s in states]))
    """)
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "PYTHONPATH": os.getcwd()}
    run = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got == [[int(s["s0"]), int(s["s1"])] for s in expected]


def test_a_setting_of_a_newer_numba_cuda_a_test_overrides_does_not_stop_it(tmp_path, capsys):
    # numba-cuda's FFI example sets CUDA_NVRTC_EXTRA_SEARCH_PATHS with override_config, which raised
    # AttributeError where the installed numba-cuda predates the setting
    path = tmp_path / "test_search.py"
    path.write_text(textwrap.dedent("""
        import numpy as np
        from numba import cuda
        from numba.cuda.tests.support import override_config


        def test_scaled():
            with override_config("CUDA_NVRTC_EXTRA_SEARCH_PATHS", "/nowhere"):
                @cuda.jit
                def scaled(a, s):
                    i = cuda.grid(1)
                    if i < len(a):
                        a[i] *= s

                scaled[1, 4](np.ones(4, dtype=np.float32), 2.0)
    """))
    rc, err, text = translate(capsys, path)
    assert rc == 0, err
    assert "__global__ void scaled(float *a, int64_t a_shape0, double s)" in text


def test_a_test_file_out_of_its_package_imports_its_siblings_relatively(tmp_path, capsys):
    # numba-cuda's test_sm, test_localmem and test_sm_creation import `.extensions_usecases`: copied out of their
    # package, the import raised "attempted relative import with no known parent package" and no test ran
    (tmp_path / "sizes.py").write_text("N = 4\n")
    path = tmp_path / "test_rel.py"
    path.write_text(textwrap.dedent("""
        import numpy as np
        from numba import cuda
        from .sizes import N
        from .usecases_n2c_absent import struct_model_type, MyStruct


        class Wrapped(MyStruct):
            pass


        def test_copy():
            dt = np.dtype(np.float32)

            @cuda.jit
            def copy(x, y):
                s = cuda.shared.array(N, dtype=dt)
                i = cuda.grid(1)
                s[i] = x[i]
                y[i] = s[i]

            x = np.arange(N, dtype=np.float32)
            copy[1, N](x, np.zeros_like(x))
    """))
    rc, err, text = translate(capsys, path)
    assert rc == 0, err
    assert "note: import of .usecases_n2c_absent: the module imports .usecases_n2c_absent from its package, and " \
        "no usecases_n2c_absent.py is next to it here, so the import mode stood in for it" in err
    assert "static constexpr int64_t N = 4;" in text and "__shared__ float s[N];" in text  # the sibling's N
    assert "__global__ void copy(const float *x, float *y)" in text


def test_two_folders_importing_relatively_in_one_process_each_get_their_own_siblings(tmp_path):
    """numba2cuda.load() imports in the caller's process: a second folder's `from .sizes import N` must not find
    the first folder's sizes.py."""
    from translator.userimport import import_path

    for name, n in (("one", 1), ("two", 2)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "sizes.py").write_text(f"N = {n}\n")
        (tmp_path / name / f"mod_{name}.py").write_text("from .sizes import N\n")
    assert import_path(str(tmp_path / "one" / "mod_one.py")).N == 1
    assert import_path(str(tmp_path / "two" / "mod_two.py")).N == 2


def test_a_module_importing_mock_call_is_imported(tmp_path, capsys):
    """numba-cuda's test_cuda_array_interface imports unittest.mock's `call`, whose `__file__` is another mock
    call: reading the module's globals raised TypeError, blamed on the module ("must import cleanly")."""
    path = tmp_path / "test_mocked.py"
    path.write_text(textwrap.dedent("""
        import numpy as np
        from numba import cuda
        from unittest.mock import call


        def test_fill():
            @cuda.jit
            def fill(a):
                i = cuda.grid(1)
                if i < a.size:
                    a[i] = 1.0

            fill[1, 4](np.zeros(4))
    """))
    rc, err, text = translate(capsys, path)
    assert rc == 0, err
    assert "__global__ void fill(double *a, int64_t a_shape0)" in text
