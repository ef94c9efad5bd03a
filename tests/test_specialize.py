"""Tile-width specialisation: detection, the dispatch the launcher emits, and that every instantiation and
the generic kernel compute bit-identical results (on the CPU runtime)."""

import re
from pathlib import Path

import numpy as np
import pytest

from translator import translate_file
from translator import translate_source
from translator.runtime.cpu_launch import load_cpu
from translator.errors import UserError
from translator.frontend.module import parse_file
from translator.lower.program import Options, build_program
from translator.analysis.specialize import parse_option

ROOT = Path(__file__).resolve().parent.parent
MATMUL = ROOT / "kernels" / "matmul.py"


def kernel_of(path, **opts):
    return build_program(parse_file(path), Options(**opts)).kernels[0]


def test_detects_the_lecture_tile_width():
    fn = kernel_of(MATMUL)
    assert fn.template_params == [("tw", "TW", (8, 16, 32))]


def test_constants_and_shapes_are_not_specialised():
    for name in ("matmul_tile", "softmax", "blur", "vector_add"):
        assert kernel_of(ROOT / "kernels" / f"{name}.py").template_params == []


def test_dispatch_is_a_switch_with_a_generic_default():
    text = translate_file(MATMUL)
    assert "template <int TW>\n__global__ void matmul_k_numba(" in text
    assert "const int64_t tw = TW > 0 ? TW : tw_arg;" in text
    cases = re.findall(r"case (\d+):\n\s+return n2c_launch\(matmul_k_numba<(\d+)>", text)
    assert cases == [("8", "8"), ("16", "16"), ("32", "32")]
    assert "default: // any other value runs the generic kernel\n        return n2c_launch(matmul_k_numba<0>" in text
    assert "specialised: tw in {8, 16, 32}" in text  # listed in the header comment


def test_specialize_option_overrides_and_disables():
    assert kernel_of(MATMUL, specialize=parse_option("tw=4,64")).template_params == [("tw", "TW", (4, 64))]
    assert kernel_of(MATMUL, specialize=parse_option("tw=")).template_params == []
    assert kernel_of(MATMUL, specialize=parse_option("none")).template_params == []
    with pytest.raises(UserError, match="not an integer parameter"):
        kernel_of(MATMUL, specialize=parse_option("m=8"))
    with pytest.raises(UserError, match="values must be integers"):
        parse_option("tw=8,x")
    with pytest.raises(UserError, match="positive"):
        kernel_of(MATMUL, specialize=parse_option("tw=0,8"))


def test_two_specialised_parameters_dispatch_on_both():
    src = '''
from numba import cuda, float32
@cuda.jit("void(float32[::1], int32, int32)")
def k(a, tw, th):
    s = cuda.shared.array(0, dtype=float32)
    v = s[:tw * th]
    for i in range(th):
        v[i] = i
    a[0] = v[0]
'''
    text = translate_source(src)
    assert "template <int TW, int TH>" in text
    assert "if (tw == 8 && th == 8)" in text and "else if (tw == 32 && th == 32)" in text
    assert "return n2c_launch(k<0, 0>" in text


@pytest.mark.parametrize("tw", [8, 16, 32, 5, 12, 1])
@pytest.mark.needs("g++")
def test_every_instantiation_and_the_generic_kernel_agree_bit_for_bit(tw, tmp_path_factory):
    module = load_cpu(MATMUL)
    rng = np.random.default_rng(11)
    h, k, w = 37, 29, 41  # not multiples of any tile
    m = rng.standard_normal((h, k)).astype(np.float32)
    n = rng.standard_normal((k, w)).astype(np.float32)
    out = np.full((h, w), np.nan, np.float32)
    grid = ((w + tw - 1) // tw, (h + tw - 1) // tw)
    module.matmul_k_numba[grid, (tw, tw), 0, 2 * tw * tw * 4](m, n, out, tw)
    # the same summation order for every tile width: p accumulates k terms in float32, in order
    expected = np.zeros((h, w), np.float32)
    for i in range(k):
        expected += m[:, i:i + 1] * n[i:i + 1, :]
    assert np.array_equal(out, expected)


def test_automatic_specialisation_stays_within_a_compile_budget():
    """dpbench's k-NN bounds loops by four integer parameters: 3 values each made 81 instantiations, and nvcc
    took two minutes. The automatic choice keeps tile widths first and stops at 9 instantiations; --specialize
    still asks for any set explicitly."""
    from translator import translate_source
    from translator.lower.program import Options
    from translator.analysis.specialize import parse_option

    src = '''
from numba import cuda

@cuda.jit("void(float64[::1], int64, int64, int64, int64)")
def k(out, a, b, c, d):
    i = cuda.grid(1)
    s = 0.0
    for x in range(a):
        for y in range(b):
            for z in range(c):
                for w in range(d):
                    s += x + y + z + w
    out[i] = s
'''
    cu = translate_source(src)
    assert "template <int A, int B>" in cu and cu.count("k<") == 9 + 1  # 9 instantiations and the generic one
    explicit = translate_source(src, options=Options(specialize=parse_option("d=4,8")))
    assert "template <int A, int D>" in explicit  # d as asked (2 values), then a: 6; b would make 18
