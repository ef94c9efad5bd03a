"""Every launch is checked before anything reaches the driver (issue 15, section 1), with the exception Numba's
dispatcher gives for the same mistake and a message naming the kernel, the field or parameter, what was expected
and what was given.

No GPU needed for the checks: they run through the matmul extension built with nvcc for sm_90 (its binding checks
types and values before it asks where a tensor lives, so CPU tensors reach them), through the CPU runtime (the same
checks, launch_checks.py) and with a fake binding. The gpu tests run each mistake in a subprocess on a real GPU and
require that it ends by a Python exception, not a signal, after the next correct launch ran and was right."""

import ctypes
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import numba2cuda  # noqa: E402
from translator.analysis.specialize import value_rules  # noqa: E402
from translator.cli import main  # noqa: E402
from translator.runtime import launch as launch_module  # noqa: E402
from translator.runtime.cpu_launch import load_cpu  # noqa: E402
from translator.runtime.cpurun import CpuLaunchError, launch as cpu_call  # noqa: E402
from translator.runtime.dropin import kernel_metadata, sources  # noqa: E402
from translator.runtime.launch import Kernel  # noqa: E402
from translator.runtime.launch_checks import KernelFaultError, LaunchError, table_limits  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MATMUL = ROOT / "kernels" / "matmul.py"
SOFTMAX = ROOT / "kernels" / "softmax.py"

# Scalars of every kind, for the binding's range and type checks (the corpus has no uint8 or bool parameter).
SCALARS = '''
from numba import cuda


@cuda.jit("void(float32[::1], int32, uint8, float32, boolean)")
def scalars(out, n, k, a, flag):
    i = cuda.grid(1)
    if i < out.shape[0] and i < n:
        out[i] = a * k if flag else a
'''

# Writes far outside its array: an illegal address on the GPU.
POKE = '''
from numba import cuda


@cuda.jit("void(float32[::1], int64)")
def poke(a, offset):
    a[offset] = 1.0
'''


@pytest.fixture(scope="module")
def matmul():
    return numba2cuda.load(MATMUL, progress=False)


@pytest.fixture(scope="module")
def scalars_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("scalars") / "scalars.py"
    path.write_text(SCALARS)
    return path


@pytest.fixture(scope="module")
def scalars_dropin(scalars_path):
    return numba2cuda.load(scalars_path, progress=False).scalars


@pytest.fixture(scope="module")
def cpu_matmul():
    return load_cpu(MATMUL)


def fake(path, result=None):
    """The kernel of a module with a binding that records its calls and returns `result` (None: launched)."""
    program, _, _ = sources(str(path))
    calls = []

    def ext(*args):
        calls.append(args)
        return result(len(calls)) if callable(result) else result

    k = Kernel(ext, *kernel_metadata(program.kernels[0]))
    k.calls = calls
    return k


@pytest.fixture(params=["dropin", "cpu"])
def mm(request):
    """matmul_k_numba on the drop-in (built extension) and on the CPU runtime: the same checks guard both."""
    return request.getfixturevalue("matmul" if request.param == "dropin" else "cpu_matmul").matmul_k_numba


def arrays(kind, h=8, k=8, w=8):
    if kind == "numpy":
        return np.zeros((h, k), np.float32), np.zeros((k, w), np.float32), np.zeros((h, w), np.float32)
    return torch.zeros(h, k), torch.zeros(k, w), torch.zeros(h, w)


def kind_of(kernel):
    return "torch" if isinstance(kernel, Kernel) else "numpy"


# --------------------------------------------------------------------------- the launch tuple


@pytest.mark.needs("g++")
def test_blockdim_is_4096_threads_more_than_the_1024_a_block_may_have(mm):
    with pytest.raises(ValueError, match=r"matmul_k_numba: blockdim \(64, 64\) is 4096 threads, more than the 1024 a "
                                         r"block may have on sm_90"):
        mm[(1, 1), (64, 64)]


@pytest.mark.needs("g++", "c++")
def test_blockdim_z_must_be_between_1_and_64(mm):
    with pytest.raises(ValueError, match=r"matmul_k_numba: blockdim\.z must be between 1 and 64, got 128"):
        mm[1, (1, 1, 128)]
    with pytest.raises(ValueError, match=r"blockdim\.x must be between 1 and 1024, got 2048"):
        mm[1, 2048]


@pytest.mark.needs("g++")
def test_sharedmem_bytes_exceed_the_opt_in_maximum_of_the_device(mm):
    with pytest.raises(ValueError, match=r"matmul_k_numba: sharedmem 307200 bytes of dynamic shared memory exceed the "
                                         r"232448 bytes a block may have on sm_90"):
        mm[(1, 1), (16, 16), 0, 300 * 1024]
    assert mm[(1, 1), (16, 16), 0, 232448] is not None  # the opt-in maximum itself is legal


@pytest.mark.needs("g++")
def test_sharedmem_and_the_static_shared_memory_together_exceed_the_maximum():
    softmax = fake(SOFTMAX)
    assert softmax.static_shared == 1024  # buf = cuda.shared.array(THREADS, float32)
    with pytest.raises(ValueError, match=r"softmax: sharedmem 232000 bytes of dynamic shared memory \+ 1024 static "
                                         r"exceed the 232448 bytes"):
        softmax[1, 256, 0, 232000]
    cpu = load_cpu(SOFTMAX).softmax
    with pytest.raises(ValueError, match=r"\+ 1024 static exceed"):
        cpu[1, 256, 0, 232000]


@pytest.mark.needs("g++", "c++")
def test_griddim_x_must_be_between_1_and_2147483647(mm):
    with pytest.raises(ValueError, match=r"matmul_k_numba: griddim\.x must be between 1 and 2147483647, got "
                                         r"2147483648"):
        mm[(2**31, 1), (16, 16)]
    assert mm[(2**31 - 1, 1), (16, 16)] is not None


@pytest.mark.needs("g++")
def test_griddim_y_and_z_must_be_between_1_and_65535(mm):
    with pytest.raises(ValueError, match=r"griddim\.y must be between 1 and 65535, got 65536"):
        mm[(1, 65536), 16]
    with pytest.raises(ValueError, match=r"griddim\.z must be between 1 and 65535, got 70000"):
        mm[(1, 1, 70000), 16]


@pytest.mark.needs("g++", "c++")
def test_griddim_and_blockdim_must_be_at_least_1(mm):
    with pytest.raises(ValueError, match=r"griddim\.x must be between 1 and 2147483647, got 0"):
        mm[(0, 1), 16]
    with pytest.raises(ValueError, match=r"blockdim\.y must be between 1 and 1024, got -4"):
        mm[1, (8, -4)]


@pytest.mark.needs("g++")
def test_must_specify_at_least_the_griddim_and_blockdim(mm):
    for config in [4, (4,), (1, 1, 0, 0, 9)]:
        with pytest.raises(ValueError, match=r"must specify at least the griddim and blockdim: launch as "
                                             r"matmul_k_numba\[grid, block\]"):
            mm[config]


@pytest.mark.needs("g++")
def test_griddim_must_be_a_sequence_of_1_2_or_3_integers(mm):
    with pytest.raises(ValueError, match=r"griddim must be a sequence of 1, 2 or 3 integers, got \(1, 1, 1, 1\)"):
        mm[(1, 1, 1, 1), 16]


@pytest.mark.needs("g++", "c++")
def test_blockdim_must_be_a_sequence_of_integers(mm):
    for block in [(16, 1.5), "16", None, 16.0]:
        with pytest.raises(TypeError, match="blockdim must be a sequence of integers"):
            mm[1, block]
    assert mm[np.int64(2), (np.int32(16), 16)] is not None  # NumPy integers are integers, as in Numba


@pytest.mark.needs("g++")
def test_sharedmem_must_be_an_integer_number_of_bytes_and_not_negative(mm):
    with pytest.raises(TypeError, match=r"sharedmem \(dynamic shared memory\) must be an integer number of bytes, "
                                        r"got float 512.0"):
        mm[1, 16, 0, 512.0]
    with pytest.raises(ValueError, match=r"sharedmem \(dynamic shared memory\) must be >= 0 bytes, got -4"):
        mm[1, 16, 0, -4]


@pytest.mark.needs("g++", "c++")
def test_stream_must_be_a_cuda_stream(mm):
    with pytest.raises(TypeError, match=r"matmul_k_numba: stream must be a CUDA stream .* got str 'fast'"):
        mm[1, 16, "fast"]


# --------------------------------------------------------------------------- arrays


@pytest.mark.needs("g++", "c++")
def test_argument_must_be_a_2d_array_got_a_1d_one(mm):
    m, n, out = arrays(kind_of(mm))
    with pytest.raises(TypeError, match=r"matmul_k_numba\(\): argument 'out' must be array\(float32, 2d, C\), got "
                                        r"array\(float32, 1d, C\)"):
        mm[(1, 1), (8, 8), 0, 512](m, n, out.reshape(-1), 8)


@pytest.mark.needs("g++", "c++")
def test_argument_must_have_the_signature_dtype(mm):
    m, n, out = arrays(kind_of(mm))
    with pytest.raises(TypeError, match=r"argument 'n' must be array\(float32, 2d, C\), got array\(float64, 2d, C\)"):
        mm[(1, 1), (8, 8), 0, 512](m, n.astype(np.float64) if kind_of(mm) == "numpy" else n.double(), out, 8)


@pytest.mark.needs("g++", "c++")
def test_argument_must_be_c_contiguous(mm):
    m, n, out = arrays(kind_of(mm))
    with pytest.raises(TypeError, match=r"argument 'm' must be array\(float32, 2d, C\), got array\(float32, 2d, A\) "
                                        r"\(.*not C-contiguous: numba2cuda indexes row-major\)"):
        mm[(1, 1), (8, 8), 0, 512](m.T, n, out, 8)


@pytest.mark.needs("g++", "c++")
def test_argument_must_be_on_a_cuda_device(matmul):
    m, n, out = arrays("torch")
    with pytest.raises(TypeError, match=r"matmul_k_numba\(\): argument 'm' must be on a CUDA device, got a tensor on "
                                        r"cpu; pass m.cuda\(\)"):
        matmul.matmul_k_numba[(1, 1), (8, 8), 0, 512](m, n, out, 8)


@pytest.mark.needs("g++")
def test_argument_is_written_by_the_kernel_but_the_numpy_array_is_read_only(mm):
    m, n, out = arrays("numpy")
    out.flags.writeable = False
    with pytest.raises(TypeError, match=r"argument 'out' is written by the kernel, but the NumPy array passed is "
                                        r"read-only"):
        mm[(1, 1), (8, 8), 0, 512](m, n, out, 8)


@pytest.mark.needs("g++")
def test_read_only_numpy_inputs_and_zero_size_arrays_launch(cpu_matmul):
    k = cpu_matmul.matmul_k_numba
    rng = np.random.default_rng(3)
    m, n = rng.standard_normal((9, 7)).astype(np.float32), rng.standard_normal((7, 5)).astype(np.float32)
    m.flags.writeable = n.flags.writeable = False
    out = np.full((9, 5), np.nan, np.float32)
    k[(1, 2), (8, 8), 0, 512](m, n, out, 8)
    assert np.allclose(out, m @ n, rtol=1e-5, atol=1e-5)
    empty_m, empty_out = np.zeros((0, 7), np.float32), np.zeros((0, 5), np.float32)
    k[(1, 1), (8, 8), 0, 512](empty_m, n, empty_out, 8)  # a legal launch that touches nothing
    assert empty_out.shape == (0, 5)


@pytest.mark.needs("g++", "c++")
def test_argument_must_be_an_array(mm):
    m, n, out = arrays(kind_of(mm))
    with pytest.raises(TypeError, match=r"argument 'n' must be array\(float32, 2d, C\) \(.*\), got list \[\[0.0\]\]"):
        mm[(1, 1), (8, 8), 0, 512](m, [[0.0]], out, 8)


@pytest.mark.needs("g++")
def test_byte_swapped_numpy_array_is_the_wrong_dtype(mm):
    m, n, out = arrays("numpy")
    with pytest.raises(TypeError, match=r"argument 'm' must be array\(float32, 2d, C\), got array\(>f4, 2d, C\)"):
        mm[(1, 1), (8, 8), 0, 512](m.astype(">f4"), n, out, 8)


@pytest.mark.needs("g++", "c++")
def test_takes_4_arguments(mm):
    m, n, out = arrays(kind_of(mm))
    with pytest.raises(TypeError, match=r"matmul_k_numba\(\) takes 4 arguments \(3 given\)"):
        mm[(1, 1), (8, 8), 0, 512](m, n, out)


# --------------------------------------------------------------------------- scalars and specialisation values


@pytest.mark.needs("g++", "c++")
def test_tile_width_must_be_greater_than_0(mm):
    m, n, out = arrays(kind_of(mm))
    for tw in (-16, 0):
        with pytest.raises(ValueError, match=rf"matmul_k_numba\(\): argument 'tw' must be > 0 \(it sizes the "
                                             rf"shared-memory views ms, ns; .*\), got {tw}"):
            mm[(1, 1), (16, 16), 0, 2048](m, n, out, tw)


@pytest.mark.needs("g++")
def test_integer_parameter_given_a_float_must_be_an_integer(mm):
    m, n, out = arrays(kind_of(mm))
    for tw, shown in [(16.0, "float 16.0"), (np.float32(16), "float32"), (np.float64(8.5), "float64")]:
        with pytest.raises(TypeError) as exc:
            mm[(1, 1), (16, 16), 0, 2048](m, n, out, tw)
        text = str(exc.value)
        assert text.startswith(f"matmul_k_numba(): argument 'tw' must be an integer (int64), got {shown}"), text
        assert "never truncates" in text and "incompatible function arguments" not in text


@pytest.mark.needs("g++")
def test_int64_parameter_given_2_to_the_63_is_an_overflow_error(mm):
    m, n, out = arrays(kind_of(mm))
    with pytest.raises(OverflowError, match=r"argument 'tw' is int64, which holds -9223372036854775808 to "
                                            r"9223372036854775807; got 9223372036854775808"):
        mm[(1, 1), (16, 16), 0, 2048](m, n, out, 2**63)


@pytest.fixture(params=["dropin", "cpu"])
def sc(request, scalars_path):
    if request.param == "dropin":
        return request.getfixturevalue("scalars_dropin"), torch.zeros(4)
    return load_cpu(scalars_path).scalars, np.zeros(4, np.float32)


@pytest.mark.needs("g++")
def test_int32_parameter_given_2_to_the_40_is_an_overflow_error(sc):
    k, out = sc
    with pytest.raises(OverflowError, match=r"scalars\(\): argument 'n' is int32, which holds -2147483648 to "
                                            r"2147483647; got 1099511627776"):
        k[1, 4](out, 2**40, 2, 1.5, True)


@pytest.mark.needs("g++")
def test_uint8_parameter_given_256_or_minus_1_is_an_overflow_error(sc):
    k, out = sc
    for v in (256, -1, np.int64(-1)):
        with pytest.raises(OverflowError, match=rf"argument 'k' is uint8, which holds 0 to 255; got {v}"):
            k[1, 4](out, 4, v, 1.5, True)


@pytest.mark.needs("g++", "c++")
def test_float_parameter_must_be_a_real_number(sc):
    k, out = sc
    for v, shown in [("1.5", "str '1.5'"), (1 + 2j, "complex"), (None, "NoneType")]:
        with pytest.raises(TypeError, match=rf"scalars\(\): argument 'a' must be a real number \(float32\), got "
                                            rf"{shown}"):
            k[1, 4](out, 4, 2, v, True)


@pytest.mark.needs("g++", "c++")
def test_bool_parameter_must_be_a_bool(sc):
    k, out = sc
    for v in (1.0, "yes", None):
        with pytest.raises(TypeError, match=r"scalars\(\): argument 'flag' must be a bool, got"):
            k[1, 4](out, 4, 2, 1.5, v)


@pytest.mark.needs("g++")
def test_scalars_take_what_numba_takes():
    """Python and NumPy integers (and bools) for integer parameters, any real number for a float one, bool, NumPy bool
    or an integer for a bool one: the kernel computes with the values converted as Numba converts them."""
    k = load_cpu(source=SCALARS).scalars
    cases = [(4, 3, 1.5, True, 4.5), (np.int32(4), np.uint8(3), np.float32(1.5), np.bool_(True), 4.5),
             (True, 3, 2, False, 2.0), (4, True, 1.5, 2, 1.5), (4, 2, np.int64(3), 0, 3.0)]
    for n, kk, a, flag, want in cases:
        out = np.zeros(4, np.float32)
        k[1, 4](out, n, kk, a, flag)
        assert out[0] == want and (out[1:] == (want if int(n) == 4 else 0)).all(), (n, kk, a, flag, out)


@pytest.mark.needs("g++")
def test_the_binding_never_throws_it_returns_what_it_refused(matmul):
    """The extension's own checks run in C++ and return, never throw: None after a launch, else the index of the first
    argument refused (types and values before devices) or a CUDA error; launch.py raises from that."""
    ext = matmul.matmul_k_numba.ext_fn
    m = torch.zeros(8, 8)
    config = (1, 1, 1, 8, 8, 1, 0, 512)
    assert ext(*config, m, m.double(), m, 8) == 1
    assert ext(*config, m, m, torch.zeros(64), 8) == 2
    assert ext(*config, m, m.t().contiguous().t(), m, 8) == 1  # not C-contiguous
    assert ext(*config, m, m, m, -16) == 3 and ext(*config, m, m, m, 0) == 3
    assert ext(*config, m, m, m, 8) == 0  # every type and value fine: then m is not on a CUDA device
    with pytest.raises(TypeError, match="incompatible function arguments"):
        ext(*config, m, m, m, np.float32(8))  # noconvert: pybind11 does not truncate; launch.py converts or refuses


def test_value_rules_of_tile_widths_divisors_and_steps(tmp_path):
    path = tmp_path / "rules.py"
    path.write_text(textwrap.dedent('''
        from numba import cuda, float32

        @cuda.jit("void(float32[::1], int64, int64, int64, int64)")
        def k(a, tw, step, d, n):
            s = cuda.shared.array(0, dtype=float32)
            tile = s[:tw]
            for i in range(cuda.threadIdx.x, n, step):
                a[i] = i / d
            tile[0] = a[0]
        '''))
    program, _, _ = sources(str(path))
    rules = value_rules(program.kernels[0])
    assert rules["tw"][0] == "> 0" and "it sizes the shared-memory view tile" in rules["tw"][1]
    assert rules["step"][0] in ("!= 0", "> 0") and "it is a range() step" in rules["step"][1]
    assert rules["d"][0] in ("!= 0", "> 0") and "it divides (/)" in rules["d"][1]
    assert rules.get("n", (">= 0",))[0] == ">= 0"  # only a loop bound: 0 (no iterations) is legal


@pytest.mark.needs("g++")
def test_the_emitted_launcher_refuses_a_tile_width_below_1(cpu_matmul):
    """Defence in depth: the extern "C" launcher itself returns cudaErrorInvalidValue for tw < 1 (called here on the
    CPU runtime without the Python checks)."""
    m, n, out = arrays("numpy")
    i64 = ctypes.c_int64
    with pytest.raises(CpuLaunchError) as exc:
        cpu_call(cpu_matmul.matmul_k_numba.lib, "matmul_k_numba", (1, 1), (8, 8), 512, m, 8, 8, n, 8, 8, out, 8, 8,
                 -16, argtypes=[None, i64, i64] * 3 + [i64])
    assert exc.value.code == 1  # cudaErrorInvalidValue


# --------------------------------------------------------------------------- after the launch


def test_launch_error_names_the_kernel_and_its_configuration():
    k = fake(MATMUL, result=(1, "cudaErrorInvalidValue", "invalid argument"))
    m = torch.zeros(8, 8)
    with pytest.raises(LaunchError, match=r"matmul_k_numba\[\(1, 1, 1\), \(8, 8, 1\), stream, 512\] failed to launch: "
                                          r"cudaErrorInvalidValue: invalid argument"):
        k[(1, 1), (8, 8), 0, 512](m, m, m, 8)


def test_a_fault_reported_at_a_later_launch_names_the_kernel_launched_before_it():
    k = fake(MATMUL, result=lambda call: None if call == 1 else (700, "cudaErrorIllegalAddress",
                                                                 "an illegal memory access was encountered"))
    m = torch.zeros(8, 8)
    k[(2, 2), (8, 8), 0, 512](m, m, m, 8)
    with pytest.raises(KernelFaultError) as exc:
        k[(1, 1), (16, 16), 0, 2048](m, m, m, 16)
    text = str(exc.value)
    assert text.startswith("matmul_k_numba[(1, 1, 1), (16, 16, 1), stream, 2048] could not launch: "
                           "cudaErrorIllegalAddress: an illegal memory access was encountered"), text
    assert "the last kernel numba2cuda launched before it was matmul_k_numba[(2, 2, 1), (8, 8, 1), stream, 512]" in text
    assert "CUDA_LAUNCH_BLOCKING=1" in text and "restart the process" in text


def test_synchronize_names_the_kernel_that_faulted(monkeypatch):
    k = fake(MATMUL)
    m = torch.zeros(8, 8)
    k[(3, 1), (8, 8), 0, 512](m, m, m, 8)

    def faulted(device=None):
        raise RuntimeError("CUDA error: an illegal memory access was encountered\nmore lines")

    monkeypatch.setattr(torch.cuda, "synchronize", faulted)
    with pytest.raises(KernelFaultError, match=r"matmul_k_numba\[\(3, 1, 1\), \(8, 8, 1\), stream, 512\] faulted on "
                                               r"the device: CUDA error: an illegal memory access was encountered"):
        numba2cuda.synchronize()


def test_synchronize_before_any_kernel_of_ours_raises_torchs_own_error(monkeypatch):
    monkeypatch.setattr(launch_module, "_last_launch", None)

    def no_driver(device=None):
        raise RuntimeError("Found no NVIDIA driver on your system")

    monkeypatch.setattr(torch.cuda, "synchronize", no_driver)
    with pytest.raises(RuntimeError, match="Found no NVIDIA driver") as exc:
        numba2cuda.synchronize()
    assert not isinstance(exc.value, KernelFaultError)


def test_an_unexpected_binding_exception_is_raised_with_the_kernel_name():
    k = fake(MATMUL, result="CUDA driver went away")
    m = torch.zeros(8, 8)
    with pytest.raises(RuntimeError, match="matmul_k_numba: CUDA driver went away"):
        k[1, (8, 8), 0, 512](m, m, m, 8)


def test_fast_path_hands_checked_arguments_straight_to_the_binding():
    k = fake(MATMUL)
    m = torch.zeros(8, 8)
    k[(2, 3), 4, 0, 16](m, m, m, 4)
    assert k.calls == [(2, 3, 1, 4, 1, 1, 0, 16, m, m, m, 4)]
    k[(2, 3), 4, 0, 16](m, m, m, np.int64(4))  # a NumPy integer, passed on as the binding takes it
    assert k.calls[-1][-1] == 4 and type(k.calls[-1][-1]) is np.int64


def test_device_limits_come_from_the_table_without_a_gpu():
    limits = table_limits((8, 6))
    assert limits.shared_optin == 101376 and limits.max_threads == 1024 and "sm_86" in limits.device
    assert table_limits((9, 0)).shared_optin == 232448
    assert table_limits((8, 8)).shared_optin == table_limits((8, 7)).shared_optin  # unknown minor: newest below it
    if not torch.cuda.is_available():
        assert launch_module.device_limits() == table_limits()


@pytest.mark.needs("g++")
def test_verify_one_off_launch_is_checked_before_it_runs(capsys):
    args = "m=float32[8,8], n=float32[8,8], out=float32[8,8]:out, tw=8"
    cases = [
        (["--grid", "1", "--block", "64,64"], "blockdim (64, 64) is 4096 threads"),
        (["--grid", "2147483648", "--block", "8"], "griddim.x must be between 1 and 2147483647"),
        (["--grid", "1", "--block", "8,8", "--shared", "400000"], "sharedmem 400000 bytes"),
    ]
    for extra, message in cases:
        assert main(["verify", str(MATMUL), "--args", args, *extra]) == 2
        assert message in capsys.readouterr().err
    for tw, message in [("16.0", "argument 'tw' must be an integer (int64), got float 16.0"),
                        ("-16", "argument 'tw' must be > 0")]:
        assert main(["verify", str(MATMUL), "--args", args.replace("tw=8", f"tw={tw}"), "--grid", "1",
                     "--block", "8,8"]) == 2
        assert message in capsys.readouterr().err


# --------------------------------------------------------------------------- on a GPU: the process survives

MATMUL_SETUP = """
m = torch.randn(67, 97, device="cuda"); n = torch.randn(97, 33, device="cuda")
out = torch.full((67, 33), float("nan"), device="cuda")
tw = 16
grid = ((33 + tw - 1) // tw, (67 + tw - 1) // tw)
k = numba2cuda.load({path!r}, progress=False).matmul_k_numba

def correct_launch():
    out.fill_(float("nan"))
    k[grid, (tw, tw), 0, 2 * tw * tw * 4](m, n, out, tw)
    torch.cuda.synchronize()
    assert torch.allclose(out, m @ n, rtol=1e-4, atol=1e-3), "the next launch is wrong"
"""

SOFTMAX_SETUP = """
x = torch.randn(5, 300, device="cuda"); out = torch.full_like(x, float("nan"))
k = numba2cuda.load({path!r}, progress=False).softmax

def correct_launch():
    out.fill_(float("nan"))
    k[5, 256](x, out)
    torch.cuda.synchronize()
    assert torch.allclose(out, torch.softmax(x, 1), rtol=1e-5, atol=1e-6), "the next launch is wrong"
"""

MISTAKE = """
import numpy as np, torch, numba2cuda
{setup}
try:
    {mistake}
except Exception as exc:
    refused = exc
else:
    raise SystemExit("not refused")
print("REFUSED", flush=True)
correct_launch()
print("CORRECT", flush=True)
raise refused
"""

GPU_MISTAKES = [  # (id, module, the mistake, exception, message)
    ("block-4096", MATMUL, "k[grid, (64, 64), 0, 2048](m, n, out, tw)", "ValueError", "is 4096 threads"),
    ("shared-300KB", MATMUL, "k[grid, (tw, tw), 0, 300 * 1024](m, n, out, tw)", "ValueError",
     "sharedmem 307200 bytes"),
    ("1-D-for-2-D", MATMUL, "k[grid, (tw, tw), 0, 2048](m, n, out.view(-1), tw)", "TypeError",
     "got array(float32, 1d, C)"),
    ("tw-negative", MATMUL, "k[grid, (tw, tw), 0, 2048](m, n, out, -16)", "ValueError", "argument 'tw' must be > 0"),
    ("tw-zero", MATMUL, "k[grid, (tw, tw), 0, 2048](m, n, out, 0)", "ValueError", "argument 'tw' must be > 0"),
    ("grid-2**31", MATMUL, "k[(2**31, 1), (tw, tw), 0, 2048](m, n, out, tw)", "ValueError",
     "griddim.x must be between 1 and 2147483647"),
    ("grid-y-65536", MATMUL, "k[(1, 65536), (tw, tw), 0, 2048](m, n, out, tw)", "ValueError",
     "griddim.y must be between 1 and 65535"),
    ("tw-float", MATMUL, "k[grid, (tw, tw), 0, 2048](m, n, out, 16.0)", "TypeError",
     "argument 'tw' must be an integer (int64), got float 16.0"),
    ("tw-2**63", MATMUL, "k[grid, (tw, tw), 0, 2048](m, n, out, 2**63)", "OverflowError", "argument 'tw' is int64"),
    ("dtype", MATMUL, "k[grid, (tw, tw), 0, 2048](m, n.double(), out, tw)", "TypeError", "got array(float64, 2d, C)"),
    ("not-contiguous", MATMUL, "k[grid, (tw, tw), 0, 2048](m.t().contiguous().t(), n, out, tw)", "TypeError",
     "not C-contiguous"),
    ("cpu-tensor", MATMUL, "k[grid, (tw, tw), 0, 2048](m.cpu(), n, out, tw)", "TypeError",
     "must be on a CUDA device"),
    ("read-only-numpy-output", MATMUL, "o = np.zeros((67, 33), np.float32); o.flags.writeable = False; "
     "k[grid, (tw, tw), 0, 2048](m, n, o, tw)", "TypeError", "the NumPy array passed is read-only"),
    ("stream", MATMUL, "k[grid, (tw, tw), 'fast', 2048](m, n, out, tw)", "TypeError", "stream must be a CUDA stream"),
    ("softmax-block-4096", SOFTMAX, "k[5, 4096](x, out)", "ValueError", "blockdim.x must be between 1 and 1024, got 4096"),
    ("softmax-shared-300KB", SOFTMAX, "k[5, 256, 0, 300 * 1024](x, out)", "ValueError", "sharedmem 307200 bytes"),
    ("softmax-1-D", SOFTMAX, "k[5, 256](x.view(-1), out)", "TypeError", "got array(float32, 1d, C)"),
    ("softmax-grid-2**31", SOFTMAX, "k[2**31, 256](x, out)", "ValueError", "griddim.x must be between"),
]


def run_gpu_script(script: str, timeout=600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.gpu
@pytest.mark.parametrize("case", GPU_MISTAKES, ids=[c[0] for c in GPU_MISTAKES])
def test_gpu_process_survives_the_mistake_and_the_next_launch_is_right(case, matmul):
    _, path, mistake, exc_type, message = case
    setup = (MATMUL_SETUP if path == MATMUL else SOFTMAX_SETUP).format(path=str(path))
    proc = run_gpu_script(MISTAKE.format(setup=setup, mistake=mistake))
    # 1: the refused mistake re-raised at the end, a Python exception; a signal would be negative
    assert proc.returncode == 1, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert "REFUSED" in proc.stdout and "CORRECT" in proc.stdout, proc.stdout + proc.stderr
    assert any(line.startswith(exc_type + ":") and message in line for line in proc.stderr.splitlines()), proc.stderr


@pytest.mark.gpu
def test_gpu_int32_overflow_and_bad_scalars_leave_the_process_working(scalars_path):
    script = f"""
import torch, numba2cuda
k = numba2cuda.load({str(scalars_path)!r}, progress=False).scalars
out = torch.zeros(4, device="cuda")
for bad in [(2**40, 2, 1.5, True), (4, 256, 1.5, True), (4, 2, "x", True), (4, 2, 1.5, 1.0)]:
    try:
        k[1, 4](out, *bad)
    except (OverflowError, TypeError) as exc:
        print(type(exc).__name__, exc)
    else:
        raise SystemExit("not refused: %r" % (bad,))
k[1, 4](out, 4, 3, 1.5, True)
torch.cuda.synchronize()
assert out.tolist() == [4.5] * 4, out
print("CORRECT")
"""
    proc = run_gpu_script(script)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("OverflowError") == 2 and proc.stdout.count("TypeError") == 2, proc.stdout
    assert "CORRECT" in proc.stdout


@pytest.mark.gpu
def test_gpu_100_kb_of_dynamic_shared_memory_runs():
    """Above 48 KiB a kernel must opt in (cudaFuncAttributeMaxDynamicSharedMemorySize); every instantiation the
    switch picks (tw 8, 16, 32 and the generic kernel for 12) does so itself. Softmax has 1 KiB of static shared
    memory: 48 KiB dynamic on top of it needs the opt-in too."""
    script = f"""
import torch, numba2cuda
k = numba2cuda.load({str(MATMUL)!r}, progress=False).matmul_k_numba
m = torch.randn(67, 97, device="cuda"); n = torch.randn(97, 33, device="cuda")
for tw in (16, 8, 32, 12):
    out = torch.full((67, 33), float("nan"), device="cuda")
    k[((33 + tw - 1) // tw, (67 + tw - 1) // tw), (tw, tw), 0, 100 * 1024](m, n, out, tw)
    torch.cuda.synchronize()
    assert torch.allclose(out, m @ n, rtol=1e-4, atol=1e-3), tw
s = numba2cuda.load({str(SOFTMAX)!r}, progress=False).softmax
x = torch.randn(5, 300, device="cuda"); y = torch.full_like(x, float("nan"))
s[5, 256, 0, 48 * 1024](x, y)
torch.cuda.synchronize()
assert torch.allclose(y, torch.softmax(x, 1), rtol=1e-5, atol=1e-6)
print("CORRECT")
"""
    proc = run_gpu_script(script)
    assert proc.returncode == 0 and "CORRECT" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.gpu
def test_gpu_zero_size_arrays_and_read_only_numpy_inputs():
    script = f"""
import numpy as np, torch, numba2cuda
k = numba2cuda.load({str(MATMUL)!r}, progress=False).matmul_k_numba
n = torch.randn(97, 33, device="cuda")
k[(3, 1), (16, 16), 0, 2048](torch.zeros(0, 97, device="cuda"), n, torch.zeros(0, 33, device="cuda"), 16)
torch.cuda.synchronize()
rng = np.random.default_rng(0)
m_h = rng.standard_normal((67, 97)).astype(np.float32); n_h = rng.standard_normal((97, 33)).astype(np.float32)
m_h.flags.writeable = n_h.flags.writeable = False
out = np.full((67, 33), np.nan, np.float32)
import warnings
with warnings.catch_warnings():
    warnings.simplefilter("error")  # no warning about read-only arrays either
    k[(3, 5), (16, 16), 0, 2048](m_h, n_h, out, 16)
assert np.allclose(out, m_h.astype(np.float64) @ n_h, rtol=1e-4, atol=1e-3)
print("CORRECT")
"""
    proc = run_gpu_script(script)
    assert proc.returncode == 0 and "CORRECT" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.gpu
@pytest.mark.parametrize("how", ["synchronize", "numpy-copy-back"])
def test_gpu_kernel_fault_is_a_python_exception_naming_the_kernel(how, tmp_path):
    path = tmp_path / "poke.py"
    path.write_text(POKE)
    if how == "synchronize":
        body = """
a = torch.zeros(4, device="cuda")
k[1, 1](a, 1 << 40)  # launches; the fault comes later
try:
    numba2cuda.synchronize()
except numba2cuda.KernelFaultError as exc:
    print("SYNC", exc, flush=True)
try:
    torch.cuda.synchronize()
except RuntimeError as exc:
    print("TORCH", type(exc).__name__, flush=True)
k[1, 1](a, 0)  # the context is lost: this launch reports the earlier fault, naming the kernel before it
"""
    else:
        body = """
import numpy as np
k[1, 1](np.zeros(4, np.float32), 1 << 40)  # the copy back synchronises
"""
    proc = run_gpu_script(f"import torch, numba2cuda\nk = numba2cuda.load({str(path)!r}, progress=False).poke\n{body}")
    assert proc.returncode == 1, f"exit {proc.returncode} (a signal is negative)\n{proc.stdout}\n{proc.stderr}"
    faults = [line for line in proc.stderr.splitlines()
              if line.startswith("translator.runtime.launch_checks.KernelFaultError:")]
    assert faults and "poke[" in faults[-1], proc.stderr
    last = faults[-1]
    if how == "synchronize":
        assert "SYNC poke[(1, 1, 1), (1, 1, 1), stream, 0] faulted on the device" in proc.stdout, proc.stdout
        assert "TORCH" in proc.stdout, proc.stdout
        assert "the last kernel numba2cuda launched before it was poke[" in last, proc.stderr


def test_a_tuple_parameter_reaches_the_binding_as_its_items(monkeypatch):
    """fill(out, out.shape, (0.25, 3)): the binding takes the tuple's items as arguments of their own, checked
    first (a list or a tuple of another length is refused, as Numba's typing refuses it); a refusal by the
    binding names the tuple, not an item. Checked with a binding that records its calls (no GPU here)."""
    from pathlib import Path

    k = fake(Path(__file__).resolve().parent / "verify_fixtures" / "tuple_params.py")
    assert [p.name for p in k.params] == ["out", "shape", "scale"] and k.params[1].type == "Tuple(int64, int64)"
    monkeypatch.setattr(Kernel, "check_devices", lambda self, tensors: None)  # CPU tensors stand in for CUDA ones
    out = torch.zeros(13, 21)
    k[(4, 6), (4, 4)](out, out.shape, (0.25, np.int32(3)))
    assert k.calls[-1][8] is out and k.calls[-1][9:] == (13, 21, 0.25, 3)
    with pytest.raises(TypeError, match=r"fill\(\): argument 'shape' must be a tuple of 2 numbers \(Tuple\(int64, "
                                        r"int64\)\), got list \[13, 21\]"):
        k[(4, 6), (4, 4)](out, [13, 21], (0.25, 3))
    with pytest.raises(TypeError, match=r"argument 'scale\[1\]' must be an integer \(int32\), got float 3.5"):
        k[(4, 6), (4, 4)](out, out.shape, (0.25, 3.5))
    refused = fake(Path(__file__).resolve().parent / "verify_fixtures" / "tuple_params.py", result=2)  # its 3rd argument: shape[1]
    with pytest.raises(RuntimeError, match="the binding refused argument 'shape'"):
        refused[(4, 6), (4, 4)](out, out.shape, (0.25, 3))


def test_a_complex_parameter_reaches_the_binding_as_its_parts(monkeypatch, tmp_path):
    path = tmp_path / "cscale.py"
    path.write_text('from numba import cuda\n\n\n@cuda.jit("void(complex128[::1], complex128)")\n'
                    'def cscale(z, c):\n    i = cuda.grid(1)\n    if i < z.size:\n        z[i] *= c\n')
    k = fake(path)
    assert k.params[1].type == "complex128" and k.__doc__ == "cscale(z: complex128[::1], c: complex128)"
    monkeypatch.setattr(Kernel, "check_devices", lambda self, tensors: None)  # CPU tensors stand in for CUDA ones
    z = torch.zeros(4, dtype=torch.complex128)
    k[1, 32](z, 0.5 - 2j)
    k[1, 32](z, np.float32(3))
    assert [c[9:] for c in k.calls] == [(0.5, -2.0), (3.0, 0.0)]
    with pytest.raises(TypeError, match=r"cscale\(\): argument 'c' must be a number \(complex128\), got NoneType"):
        k[1, 32](z, None)


def test_a_tuple_of_tuples_is_taken_as_its_leaves_with_their_rules():
    """A kernel parameter ((), (5, 6), (8, 9.5)): the binding takes its numbers one by one; a rule the metadata gives
    per leaf ("[1] > 0") lands on that leaf, inside its inner tuple."""
    from translator.runtime import launch_checks as checks

    p = checks.Param("x", "Tuple(Tuple(), Tuple(int64, int64), Tuple(int64, float32))", False,
                     "[1] > 0: it sizes a tile | [3] != 0: it divides")
    assert [(q.name, q.type, q.rule) for q in p.leaves()] == [
        ("x[1][0]", "int64", ""), ("x[1][1]", "int64", "> 0"), ("x[2][0]", "int64", ""), ("x[2][1]", "float32", "!= 0")]
    value = checks.scalar("k", p, ((), (5, 6), (8, 9.5)))
    assert checks.flat(p, value) == [5, 6, 8, 9.5]
    with pytest.raises(TypeError, match="argument 'x\\[1\\]' must be a tuple of 2 numbers"):
        checks.scalar("k", p, ((), (5,), (8, 9.5)))
