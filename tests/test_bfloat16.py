"""numba.cuda.bf16: bfloat16 values in kernels as cuda_bf16.h's __nv_bfloat16, whose operators and functions
numba-cuda binds one for one (its tests' kernels were 'not supported'). The translation calls the same C++ functions;
the CPU runtime's stand-in header rounds as they do, checked here against a bfloat16 computed from float32 bits."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest

from translator import translate_source
from translator.errors import UserError
from translator.lower.program import Options
from translator.runtime.cpu_launch import load_cpu

KERNEL = '''
import math
from numba import cuda, float32, int32
from numba.cuda.bf16 import (bfloat16, habs, hadd, hfma, hneg, hmax, hmin_nan, heq, hisinf, hisnan, hdiv,
                             bfloat16_to_int32_rn, bfloat16_to_int32_rd, int32_to_bfloat16_rz,
                             float32_to_bfloat16, bfloat16_as_uint16)
from numba.cuda._internal.cuda_bf16 import nv_bfloat16, htrunc


@cuda.jit(device=True)
def add_bf16(a, b):
    return a + b


@cuda.jit("void(float32[::1], float32[:, ::1], int32[:, ::1])")
def kernel(x, out, iout):
    i = cuda.grid(1)
    if i < x.shape[0]:
        a = bfloat16(1.25)
        b = bfloat16(x[i])
        out[i, 0] = float32(habs(b))
        out[i, 1] = float32(hadd(a, b))
        out[i, 2] = float32(hfma(a, b, b))
        out[i, 3] = float32(a * b - a / b)
        out[i, 4] = float32(hneg(hmax(a, b)))
        out[i, 5] = float32(add_bf16(a, b))
        out[i, 6] = float32(math.floor(b))
        out[i, 7] = float32(float32_to_bfloat16(x[i]) + nv_bfloat16(3))
        out[i, 8] = float32(htrunc(hdiv(b, a)))
        out[i, 9] = float32(hmin_nan(a, b))
        iout[i, 0] = bfloat16_to_int32_rn(b)
        iout[i, 1] = bfloat16_to_int32_rd(b)
        iout[i, 2] = int32(heq(a, b)) + 2 * int32(hisnan(b)) + 4 * hisinf(b)
        iout[i, 3] = int32(bfloat16_as_uint16(int32_to_bfloat16_rz(iout[i, 0] * 1001)))
        iout[i, 4] = int32(a < b)
'''


def bf16(values) -> np.ndarray:
    """VALUES (float64) rounded to bfloat16, to nearest even, once: through float32 only where that is exact."""
    v = np.asarray(values, np.float64)
    out = np.empty_like(v)
    for k, d in enumerate(v.flat):
        if not math.isfinite(d) or d == 0:
            out.flat[k] = d
            continue
        m, e = math.frexp(d)
        scale = max(e - 8, -133)
        r = round(math.ldexp(d, -scale))  # Python's round: to nearest even
        out.flat[k] = math.ldexp(r, scale)
    return out.astype(np.float32)


def test_bf16_kernels_call_cuda_bf16_functions():
    cu = translate_source(textwrap.dedent(KERNEL), "bf.py", Options())
    assert "#include <cuda_bf16.h>" in cu
    for c in ("__nv_bfloat16 a = __nv_bfloat16(1.25);", "__nv_bfloat16 b = __nv_bfloat16(x[i]);", "__habs(b)",
              "__hadd(a, b)", "__hfma(a, b, b)", "a * b - a / b", "__hneg(__hmax(a, b))", "hfloor(b)",
              "__float2bfloat16(x[i]) + __nv_bfloat16(3)", "htrunc(__hdiv(b, a))", "__bfloat162int_rn(b)",
              "__int2bfloat16_rz(", "__bfloat16_as_ushort(", "__device__ __nv_bfloat16 add_bf16(__nv_bfloat16 a, "
              "__nv_bfloat16 b)"):
        assert c in cu, c


@pytest.mark.needs("g++")
def test_bf16_kernels_compute_bfloat16_results_on_the_cpu_runtime():
    module = load_cpu(source=textwrap.dedent(KERNEL))
    x = np.array([-2.5, 3.3, 0.1, 1e30, -7.75, np.inf, np.nan, 1.25], np.float32)
    out = np.zeros((x.size, 10), np.float32)
    iout = np.zeros((x.size, 5), np.int32)
    module.kernel[1, x.size](x, out, iout)
    a, b = 1.25, bf16(x).astype(np.float64)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out[:, 0], np.abs(b).astype(np.float32))
        np.testing.assert_array_equal(out[:, 1], bf16(a + b))
        np.testing.assert_array_equal(out[:, 2], bf16(a * b + b))
        np.testing.assert_array_equal(out[:, 3], bf16(bf16(a * b) - bf16(a / b)))
        np.testing.assert_array_equal(out[:, 4], -bf16(np.fmax(a, b)))
        np.testing.assert_array_equal(out[:, 6], np.floor(b).astype(np.float32))
        np.testing.assert_array_equal(out[:, 7], bf16(b + 3))
        np.testing.assert_array_equal(out[:, 8], np.trunc(bf16(b / a)))
        np.testing.assert_array_equal(out[:, 9], np.where(np.isnan(b), np.nan, np.minimum(a, b)).astype(np.float32))
        finite = np.isfinite(b)
        np.testing.assert_array_equal(iout[finite, 0], np.clip(np.rint(b[finite]), -2**31, 2**31 - 1).astype(np.int32))
        np.testing.assert_array_equal(iout[finite, 1], np.clip(np.floor(b[finite]), -2**31, 2**31 - 1).astype(np.int32))
    assert iout[6, 0] == 0 and iout[5, 0] == 2**31 - 1  # NaN to 0, infinity saturated
    assert iout[:, 2].tolist() == [0, 0, 0, 0, 0, 4, 2, 1]  # heq, hisnan, hisinf
    assert iout[:, 4].tolist() == (a < b).astype(np.int32).tolist()
    # __int2bfloat16_rz truncates: -2 * 1001 = -2002 is -2000 in bfloat16 (0xC4FA), not -2004
    assert iout[0, 3] == 0xC4FA


@pytest.mark.parametrize("expr, construct", [("a + x[0]", "'+' of bfloat16 and float32"),
                                             ("a ** 2", "'**' of bfloat16 and int64"), ("a % a", "'%' on bfloat16")])
def test_bf16_mixed_with_another_type_is_refused_with_the_explicit_spelling(expr, construct):
    src = f'''
from numba import cuda, float32
from numba.cuda.bf16 import bfloat16


@cuda.jit("void(float32[::1])")
def k(x):
    a = bfloat16(x[1])
    x[0] = float32({expr})
'''
    with pytest.raises(UserError) as exc:
        translate_source(src, "bf.py", Options())
    assert f"error: {construct}: numba2cuda translates cuda_bf16.h's +, -, *, / and comparisons" in exc.value.text
    assert "convert explicitly: bfloat16(x)" in exc.value.text


@pytest.mark.gpu
def test_gpu_bf16_kernels_match_numba():
    numba_cuda = pytest.importorskip("numba.cuda")
    if not numba_cuda.is_available():
        pytest.skip("no CUDA GPU")
    from translator.runtime.dropin import load

    import importlib.util
    import sys
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bf_gpu.py"
        path.write_text(textwrap.dedent(KERNEL))
        spec = importlib.util.spec_from_file_location("bf_gpu", path)
        original = importlib.util.module_from_spec(spec)
        sys.modules["bf_gpu"] = original
        spec.loader.exec_module(original)
        translated = load(str(path))
        x = np.array([-2.5, 3.3, 0.1, 1e30, -7.75, np.inf, np.nan, 1.25], np.float32)
        results = []
        for kernel in (original.kernel, translated.kernel):
            out, iout = np.zeros((x.size, 10), np.float32), np.zeros((x.size, 5), np.int32)
            kernel[1, x.size](x, out, iout)
            results.append((out, iout))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


@pytest.mark.needs("g++")
def test_the_host_compiler_check_finds_the_runtimes_cuda_headers(monkeypatch, tmp_path):
    """Where no nvcc is found, translate checks its output with g++ and the CPU runtime's header, which failed on
    `#include <cuda_bf16.h>` (and cuda_fp16.h): the stand-ins in runtime/cpu_include were not on its path."""
    from translator.build import toolchain
    from translator.runtime import selfcheck

    monkeypatch.setattr(toolchain, "cuda_home", lambda: str(tmp_path / "no-cuda"))
    monkeypatch.setenv("NUMBA2CUDA_CACHE", str(tmp_path / "cache"))
    assert selfcheck._compiler()[0] == "g++ (CPU runtime)"
    outcome = selfcheck.check_cu(translate_source(textwrap.dedent(KERNEL), "bf.py", Options()), "bf.py")
    assert outcome.ok, outcome.problems
