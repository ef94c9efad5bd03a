"""numba-cuda's FP8 types (numba.cuda._internal.cuda_fp8: fp8_e5m2, fp8_e4m3, fp8_e8m0) as cuda_fp8.h's
__nv_fp8_* classes: made by their constructors, read by their conversion operators, and the cvt_* functions with
their enums, which is what numba-cuda's bindings call (its FP8 tests were "call to cuda._internal.cuda_fp8.fp8_e5m2():
is not supported in kernels"). They are storage types: no arithmetic and no implicit conversion, as in Numba.
cuda_fp8.h has no CPU stand-in, so the CPU runtime and verify's CPU tier say so; the GPU test checks against Numba."""

from __future__ import annotations

import numpy as np
import pytest

from gpu_pairs import numba_and_translation
from translator import translate_source
from translator.errors import UserError
from translator.runtime.cpu_launch import load_cpu

KERNEL = '''
from numba import cuda, float32, float64, int8, int64, uint8, uint64
from numba.cuda.types import float16, bfloat16
from numba.cuda._internal.cuda_fp8 import (fp8_e5m2, fp8_e4m3, fp8_e8m0, cvt_float_to_fp8, cvt_double_to_e8m0,
                                          cvt_e8m0_to_bf16raw, cvt_bfloat16raw_to_fp8, saturation_t,
                                          fp8_interpretation_t)
from cuda.bindings.runtime import cudaRoundMode


@cuda.jit("void(float32[::1], float32[:, ::1], int64[:, ::1], uint8[:, ::1])")
def kernel(x, out, iout, raw):
    i = cuda.grid(1)
    if i < x.shape[0]:
        a = fp8_e5m2(x[i])
        b = fp8_e4m3(float64(x[i]))
        c = fp8_e8m0(x[i])
        out[i, 0] = float32(a)
        out[i, 1] = float32(float16(b))
        out[i, 2] = float32(float64(c))
        out[i, 3] = float32(bfloat16(b))
        out[i, 4] = float32(fp8_e4m3(int8(7)))
        iout[i, 0] = int64(a)
        iout[i, 1] = int64(int8(b))
        iout[i, 2] = int64(uint64(c))
        raw[i, 0] = uint8(b)
        raw[i, 1] = cvt_float_to_fp8(x[i], saturation_t.SATFINITE, fp8_interpretation_t.E5M2)
        raw[i, 2] = cvt_float_to_fp8(x[i], saturation_t.NOSAT, fp8_interpretation_t.E4M3)
        raw[i, 3] = cvt_double_to_e8m0(float64(x[i]), saturation_t.SATFINITE, cudaRoundMode.cudaRoundPosInf)
        bits = cvt_e8m0_to_bf16raw(raw[i, 3])
        iout[i, 3] = int64(bits.x)
        raw[i, 4] = cvt_bfloat16raw_to_fp8(bits, saturation_t.NOSAT, fp8_interpretation_t.E4M3)
'''


def test_fp8_values_are_cuda_fp8s_constructors_and_conversions():
    cu = translate_source(KERNEL, "fp8.py")
    assert "#include <cuda_fp8.h>" in cu
    for line in ("__nv_fp8_e5m2 a = __nv_fp8_e5m2(x[i]);", "__nv_fp8_e4m3 b = __nv_fp8_e4m3((double)x[i]);",
                 "out[i * out_shape1] = (float)a;", "(float)(__half)b;", "(float)(double)c;",
                 "(float)(__nv_bfloat16)b;", "iout[i * iout_shape1] = (int64_t)a;", "(int64_t)(int8_t)b;",
                 "(int64_t)(uint64_t)c;", "raw[i * raw_shape1] = (uint8_t)b;",
                 "n2c::cvt_float_to_fp8(x[i], 1, 1);", "n2c::cvt_float_to_fp8(x[i], 0, 0);",
                 "n2c::cvt_double_to_e8m0((double)x[i], 1, 2);",
                 "__nv_bfloat16_raw bits = __nv_cvt_e8m0_to_bf16raw(raw[i * raw_shape1 + 3]);",
                 "iout[i * iout_shape1 + 3] = (int64_t)bits.x;", "n2c::cvt_bfloat16raw_to_fp8(bits, 0, 0);"):
        assert line in cu, line


@pytest.mark.parametrize("body, said", [
    ("out[0] = float32(a + a)", "fp8_e5m2 operand: numba-cuda's FP8 types are storage: they have no arithmetic"),
    ("out[0] = a", "fp8_e5m2 stored as float32: numba-cuda's FP8 types convert to and from other types only where "
                   "the code says so"),
    ("out[0] = float32(a.x)", "attribute .x: a fp8_e5m2 has no attribute 'x'"),
    # code Numba refuses, found by an adversarial review: it was translated (exit 0) or failed nvcc (exit 70)
    ("out[0] = float32(bool(a))", "bool\\(\\) of a fp8_e5m2: numba-cuda binds no such conversion"),
    ("out[0] = float(a)", "float\\(\\) of a fp8_e5m2: numba-cuda binds no such conversion"),
    ("out[0] = float32(fp8_e4m3(a))", "fp8_e4m3\\(\\) of a fp8_e5m2: numba-cuda binds no such conversion"),
    ("if a:\n        out[0] = 1.0", "a fp8_e5m2 as a condition: numba-cuda's FP8 types have no truth value"),
    ("out[0] = float32(abs(a))", "abs\\(\\) of an FP8 value: numba-cuda's FP8 types are storage"),
    ("print(a)", "print\\(\\) of an FP8 value: Numba has no printing"),
])
def test_fp8_values_have_no_arithmetic_and_no_implicit_conversion(body, said):
    src = ("from numba import cuda, float32\nfrom numba.cuda._internal.cuda_fp8 import fp8_e5m2, fp8_e4m3\n\n\n"
           f'@cuda.jit("void(float32[::1])")\ndef k(out):\n    a = fp8_e5m2(out[1])\n    {body}\n')
    with pytest.raises(UserError, match=said):
        translate_source(src, "fp8.py")


def test_the_cpu_runtime_says_fp8_runs_on_a_gpu_only():
    with pytest.raises(UserError, match="the translation runs on a GPU only: it uses FP8 values"):
        load_cpu(source=KERNEL)


@pytest.mark.needs("nvcc")
def test_an_fp8_translation_compiles(tmp_path, capsys):
    from translator.cli import main

    path = tmp_path / "fp8.py"
    path.write_text(KERNEL)
    assert main(["translate", str(path), "-o", str(tmp_path / "fp8.cu")]) == 0, capsys.readouterr().err


@pytest.mark.gpu
def test_gpu_fp8_matches_numba(tmp_path):
    """Every FP8 conversion and cvt function, on values around each format's range, bit for bit against Numba."""
    original, translated = numba_and_translation(tmp_path, "fp8", KERNEL)
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.standard_normal(200) * 10, rng.standard_normal(200) * 1e5, [0.0, -0.0, 1e-9, 448.0,
                        449.0, 57344.0, 1e20, -1e20, np.inf, -np.inf, np.nan]]).astype(np.float32)
    results = []
    for run in (original.kernel, translated.kernel):
        out, iout, raw = np.zeros((x.size, 5), np.float32), np.zeros((x.size, 4), np.int64), \
            np.zeros((x.size, 5), np.uint8)
        run[(x.size + 63) // 64, 64](x, out, iout, raw)
        results.append((out, iout, raw))
    for want, got in zip(*results):
        np.testing.assert_array_equal(want.view(np.uint8), got.view(np.uint8))
