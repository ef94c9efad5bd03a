"""Numba constructs people write in real kernels (issue 17), each translated and run on the CPU runtime
against NumPy, or against Numba's own CPU compilation where the typing is what is tested."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import numpy as np
import pytest

from gpu_pairs import numba_and_translation
from translator import translate_source
from translator.errors import UserError
from translator.frontend.module import parse_source
from translator.ir.typesys import parse_types_option
from translator.lower.program import Options, build_program
from translator.lower.shells import written_arrays
from translator.runtime.cpu_launch import load_cpu

HEAD = "import math\nimport numpy as np\nfrom numba import cuda, float32, int32, int64, uint32\n"


def kernel_text(cu: str, name: str) -> str:
    start = cu.index(f"void {name}(")
    return cu[start:cu.index("\n}", start)]


# ------------------------------------------------------------------ chained indexing, slices, writes

@pytest.mark.needs("g++")
def test_chained_indexing_reads_and_writes_the_element_numba_does():
    src = HEAD + '''
@cuda.jit("void(float32[:, ::1], float32[:, ::1], float32[::1])")
def k(A, force, out):
    r = cuda.threadIdx.x
    tile = cuda.shared.array((8, 3), float32)
    loc = cuda.local.array((2, 3), float32)
    tile[r][1] = A[r][0] * 2
    tile[r][0] = A[r][2]
    cuda.syncthreads()
    loc[1][2] = tile[r][1] + tile[(r + 1) % 8][0]
    force[r][0] = loc[1][2]
    force[r][1] = A[r][-1]
    out[r] = A[-1][r % 3]
'''
    module = load_cpu(source=src)
    body = kernel_text(module.cu, "k")
    assert "A[r * A_shape1]" in body and "tile[r][1]" in body and "loc[1][2]" in body
    A = np.random.default_rng(1).standard_normal((8, 3)).astype(np.float32)
    force = np.full((8, 2), np.nan, np.float32)
    out = np.full(8, np.nan, np.float32)
    module.k[1, 8](A, force, out)
    tile1, tile0 = A[:, 0] * np.float32(2), A[:, 2]
    assert np.array_equal(force[:, 0], tile1 + np.roll(tile0, -1))
    assert np.array_equal(force[:, 1], A[:, -1])
    assert np.array_equal(out, A[-1][np.arange(8) % 3])


@pytest.mark.needs("g++")
def test_a_row_of_a_shared_array_is_a_pointer_into_it():
    src = HEAD + '''
@cuda.jit("void(int32[:, ::1])")
def k(out):
    t = cuda.threadIdx.x
    tile = cuda.shared.array((4, 5), int32)
    row = tile[t]
    for j in range(5):
        row[j] = t * 10 + j
    cuda.syncthreads()
    for j in range(5):
        out[t, j] = tile[3 - t][j]
'''
    module = load_cpu(source=src)
    assert "int *row = &tile[0][0] + (int64_t)t * 5;" in module.cu
    out = np.zeros((4, 5), np.int32)
    module.k[1, 4](out)
    assert out.tolist() == [[(3 - t) * 10 + j for j in range(5)] for t in range(4)]


@pytest.mark.needs("g++")
def test_writes_through_slices_are_pointer_offsets_atomics_included():
    src = HEAD + '''
@cuda.jit(device=True)
def first(a):
    a[0] += a.shape[0]

@cuda.jit("void(int64[::1], int32[::1], int64)")
def k(res, flags, j):
    g = cuda.grid(1)
    old = cuda.atomic.compare_and_swap(flags[g:], 0, g + 1)
    cuda.atomic.add(flags[g:], 0, old)
    res[g:][0] = 1
    first(res[g:])
    res[g + 4:][j - 1] += 100
'''
    cu = translate_source(src)
    body = kernel_text(cu, "k")
    assert "int64_t *res" in body and "int *flags" in body and "const" not in body.split(")")[0]
    assert "atomicCAS(&flags[g], 0, (int)(g + 1))" in body and "&[" not in body
    assert "first(res + g, res_shape0 - g)" in body
    module = load_cpu(source=src)
    res = np.zeros(8, np.int64)
    flags = np.array([0, 5, 0, 0, 7, 0, 0, 0], np.int32)
    module.k[1, 4](res, flags, 1)
    expect_res = np.zeros(8, np.int64)
    for g in range(4):
        expect_res[g] = 1
        expect_res[g] += 8 - g
    expect_res[4:] += 100
    assert res.tolist() == expect_res.tolist()
    assert flags[:4].tolist() == [1, 5 + 5, 3, 4]


def test_an_attribute_named_like_a_parameter_is_not_a_write():
    src = HEAD + '''
@cuda.jit
def k(x, out):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    out[i] = x[i]
'''
    info = parse_source(src, "k.py")
    from translator.ir.typesys import parse_type
    written = written_arrays(info.functions["k"], [parse_type("float32[::1]")] * 2)
    assert written == {"out"}


# ------------------------------------------------------------------ names, constants, shapes

@pytest.mark.needs("g++")
def test_from_math_import_pi_and_float_of_a_string():
    src = '''from math import pi, inf
from numba import cuda
TWO_PI = 2 * pi
BIG = float("inf")

@cuda.jit("void(float64[::1])")
def k(out):
    out[0] = pi
    out[1] = TWO_PI
    out[2] = float('inf')
    out[3] = float("-inf")
    out[4] = float('nan')
    out[5] = BIG
    out[6] = -inf
'''
    out = np.zeros(7)
    load_cpu(source=src).k[1, 1](out)
    assert out[:2].tolist() == [math.pi, 2 * math.pi]
    assert out[2] == math.inf and out[3] == -math.inf and math.isnan(out[4]) and out[5] == math.inf
    assert out[6] == -math.inf


@pytest.mark.needs("g++")
def test_shared_array_shaped_by_a_local_alias():
    src = HEAD + '''
@cuda.jit("void(float32[::1])")
def k(out):
    TPB = 16
    ROWS = TPB // 8
    sm = cuda.shared.array((ROWS, TPB), float32)
    t = cuda.threadIdx.x
    sm[0, t] = t
    sm[1, t] = 2 * t
    cuda.syncthreads()
    out[t] = sm[0, TPB - 1 - t] + sm[1, t]
'''
    module = load_cpu(source=src)
    assert "__shared__ float sm[2][16];" in module.cu
    assert "ROWS" not in kernel_text(module.cu, "k")  # only the shape read it; TPB is read as a number too
    out = np.zeros(16, np.float32)
    module.k[1, 16](out)
    assert out.tolist() == [15 - t + 2 * t for t in range(16)]


@pytest.mark.needs("g++")
def test_device_functions_returning_none_and_bare_returns():
    src = HEAD + '''
@cuda.jit(device=True)
def put(a, i, v):
    if i >= a.shape[0]:
        return None
    a[i] = v
    return

@cuda.jit(device=True)
def nothing():
    return None

@cuda.jit("void(int32[::1])")
def k(out):
    i = cuda.grid(1)
    nothing()
    put(out, i, i * 3)
    if i == 0:
        return None
    put(out, i + 100, 0)
'''
    out = np.zeros(8, np.int32)
    load_cpu(source=src).k[1, 16](out)
    assert out.tolist() == [3 * i for i in range(8)]


@pytest.mark.needs("g++")
def test_dtypes_as_values():
    src = HEAD + '''
@cuda.jit("void(float32[::1], int64[::1])")
def k(x, n):
    i = cuda.grid(1)
    buf = cuda.local.array(2, x.dtype)
    buf[0] = x.dtype.type(n[i]) / 3
    dt = n.dtype
    buf[1] = dt(x[i] * 2.5)
    f = np.float32
    x[i] = buf[0] + buf[1] + f(0.1)
'''
    module = load_cpu(source=src)
    assert "float buf[2];" in module.cu
    x = np.arange(5, dtype=np.float32) + np.float32(0.5)
    n = np.arange(5, dtype=np.int64) * 7
    expect = (n.astype(np.float32) / np.float32(3)).astype(np.float32) \
        + (x * 2.5).astype(np.int64).astype(np.float32) + np.float32(0.1)
    module.k[1, 5](x, n)
    assert np.array_equal(x, expect.astype(np.float32))


# ------------------------------------------------------------------ arrays bound to several arrays

@pytest.mark.needs("g++")
def test_one_array_name_bound_on_two_branches():
    src = HEAD + '''
@cuda.jit("void(float64[::1], float64[::1], int64)")
def heat(buf_0, buf_1, steps):
    i = cuda.grid(1)
    for step in range(steps):
        if step % 2 == 0:
            data = buf_0
            nxt = buf_1
        else:
            data = buf_1
            nxt = buf_0
        if 0 < i < len(data) - 1:
            nxt[i] = data[i] + 0.25 * (data[i - 1] - 2 * data[i] + data[i + 1])
        cuda.syncthreads()
'''
    module = load_cpu(source=src)
    body = kernel_text(module.cu, "heat")
    assert "const double *data;" in body and "double *nxt;" in body and "data = buf_0;" in body
    a = np.zeros(32)
    a[16] = 100.0
    b = a.copy()
    module.heat[1, 32](a, b, 5)
    ra, rb = np.zeros(32), np.zeros(32)
    ra[16] = 100.0
    rb[:] = ra
    for step in range(5):
        data, nxt = (ra, rb) if step % 2 == 0 else (rb, ra)
        nxt[1:-1] = data[1:-1] + 0.25 * (data[:-2] - 2 * data[1:-1] + data[2:])
    assert np.array_equal(a, ra) and np.array_equal(b, rb)


@pytest.mark.needs("g++")
def test_an_array_chosen_by_a_conditional_expression():
    src = HEAD + '''
@cuda.jit("void(int32[:, ::1], int32[:, ::1], int32[::1], int32)")
def k(x, y, out, c):
    i = cuda.threadIdx.x
    src = x if c > i else y
    out[i] = src[i, 1] + src.shape[1]
'''
    module = load_cpu(source=src)
    x = np.arange(16, dtype=np.int32).reshape(8, 2)
    y = -np.arange(24, dtype=np.int32).reshape(8, 3)
    out = np.zeros(8, np.int32)
    module.k[1, 8](x, y, out, 3)
    assert out.tolist() == [x[i, 1] + 2 if 3 > i else y[i, 1] + 3 for i in range(8)]
    assert "const int *x" in module.cu and "const int *y" in module.cu


def test_arrays_of_different_types_on_one_name_are_an_error():
    src = HEAD + '''
@cuda.jit("void(int32[::1], float32[::1], int32)")
def k(x, y, c):
    if c > 0:
        a = x
    else:
        a = y
    a[0] = 1
'''
    from translator.errors import UserError
    with pytest.raises(UserError, match="'a' bound to arrays of different types"):
        translate_source(src)


# ------------------------------------------------------------------ calls

@pytest.mark.needs("g++")
def test_cpu_jit_functions_are_device_functions():
    import numba

    src = '''from math import pi
import numba
from numba import cuda, njit

@numba.jit
def business_logic(x, y, z):
    return 4 * z * (2 * x - (4 * y) / 2 * pi)

@njit("float64(float64)", cache=False, fastmath=False)
def twice(v):
    return v * 2

@cuda.jit("void(float64[::1], int64[::1], int64[::1], int64[::1])")
def f(res, xarr, yarr, zarr):
    tid = cuda.grid(1)
    if tid < len(xarr):
        res[tid] = twice(business_logic(xarr[tid], yarr[tid], zarr[tid]))
'''
    X, Y, Z = (np.array(v, np.int64) for v in ([1, 10, 234], [2, 2, 4014], [3, 14, 2211]))
    res = np.zeros(3)
    load_cpu(source=src).f[1, 32](res, X, Y, Z)

    @numba.njit
    def business_logic(x, y, z):
        return 4 * z * (2 * x - (4 * y) / 2 * math.pi)

    assert res.tolist() == [2 * business_logic(x, y, z) for x, y, z in zip(X, Y, Z)]


def test_a_cpu_jit_function_made_by_calling_njit_is_a_device_function(capsys):
    """A geodesy library compiles one Python function for each target: `njit_sphr = numba.njit(sphr)`, and a kernel
    calls the CPU dispatcher, as numba-cuda's cpu_gpu_compat does. It was "'njit_sphr' is computed when the module
    runs (by a call)"; `njit(cache=True)(f)` too."""
    src = '''import math
import numba
from numba import cuda, njit

def sphr(a, b):
    return math.sqrt(a * a + b * b)

njit_sphr = numba.njit(sphr)
fast_sphr = njit(cache=True)(sphr)

@cuda.jit("void(float64[::1], float64[::1])")
def k(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = njit_sphr(x[i], 2.0) + fast_sphr(x[i], 1.0)
'''
    module = load_cpu(source=src)
    assert "__device__ double njit_sphr(double a, double b)" in module.cu
    x, out = np.linspace(-3, 3, 50), np.zeros(50)
    module.k[2, 32](x, out)
    assert out.tolist() == [math.sqrt(v * v + 4.0) + math.sqrt(v * v + 1.0) for v in x]


@pytest.mark.needs("g++")
def test_match_all_and_match_any_as_numba_types_them():
    src = HEAD + '''
@cuda.jit("void(int32[::1], int64[::1])")
def k(x, out):
    i = cuda.threadIdx.x
    m, ok = cuda.match_all_sync(0xffffffff, x[i])
    out[i * 3] = m
    out[i * 3 + 1] = ok
    out[i * 3 + 2] = cuda.match_any_sync(0xffffffff, x[i] % 2)
'''
    module = load_cpu(source=src)
    x = np.zeros(64, np.int32)
    x[40:] = np.arange(24) % 2  # warp 0 all equal, warp 1 not
    out = np.zeros(64 * 3, np.int64)
    module.k[1, 64](x, out)
    out = out.reshape(64, 3)
    assert (out[:32, 0] == -1).all() and (out[:32, 1] == 1).all()  # int32 mask: all lanes is -1
    assert (out[32:, 0] == 0).all() and (out[32:, 1] == 0).all()
    odd = int(np.packbits(((x[32:] % 2) == 1)[::-1]).view(">u4")[0])
    assert out[32 + 9, 2] == np.int32(np.uint32(odd)) and out[33, 2] == np.int32(np.uint32(~odd & 0xffffffff))


@pytest.mark.needs("g++")
def test_numpy_ufunc_with_an_output_array_runs_over_every_element():
    src = '''import numpy as np
from numba import cuda

@cuda.jit("void(float32[:, ::1], float32[:, ::1], float64[::1])")
def f(r, x, s):
    np.sin(x, r)
    np.arctan2(x[0], 2, s)
'''
    x = (np.arange(12, dtype=np.float32) - 5).reshape(3, 4)
    r = np.zeros_like(x)
    s = np.zeros(4)
    load_cpu(source=src).f[1, 1](r, x, s)
    np.testing.assert_allclose(r, np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(s, np.arctan2(x[0], 2), rtol=1e-6)
    assert r.dtype == np.float32


def numpy_scalar_math(x, y):
    a = np.sin(x) + np.arctan2(x, 3)  # float32 loops: float32 results
    b = np.maximum(x, y) - np.minimum(x, np.nan)  # NaN propagates
    c = np.fmax(x, np.nan) + np.fmin(np.nan, y)
    d = np.sign(x) * np.abs(y) + np.square(x) + np.negative(y)
    e = np.sqrt(np.int32(7)) + np.floor(x) + np.exp(y / 8)  # sqrt(int32) is float64
    return a, b, c, d, e, np.degrees(x), np.hypot(x, y), np.power(x, 2)


@pytest.mark.needs("g++")
def test_numpy_math_on_scalars_matches_numba():
    import numba
    from test_semantics import inputs, kernel_source

    fn = numpy_scalar_math
    a, b = inputs("float32", np.random.default_rng(7))
    reference = numba.njit(error_model="numpy")(fn)
    expected = np.array([[float(v) for v in reference(x, y)] for x, y in zip(a, b)])
    module = load_cpu(source=kernel_source(fn, expected.shape[1], ("float32", "float32")))
    out = np.full(expected.shape, np.nan)
    module.apply[(a.shape[0] + 63) // 64, 64](a, b, out)
    # the same loops, so the same types; libm's float32 sin may differ from NumPy's by an ulp
    np.testing.assert_allclose(out, expected, rtol=4e-7, equal_nan=True)
    assert "sinf(" in module.cu and "atan2f(" in module.cu and "sqrt(7.0)" in module.cu


@pytest.mark.needs("g++")
def test_a_kernel_without_parameters_and_a_view_of_a_new_dynamic_array(capfd):
    src = HEAD + '''
@cuda.jit
def views():
    floats = cuda.shared.array(0, dtype=np.float32)
    ints = cuda.shared.array(0, dtype=np.int32)[1:]
    floats[0] = 2.5
    ints[0] = 7
    print(floats[0], ints[0], len(ints))
'''
    module = load_cpu(source=src)
    assert 'extern "C" cudaError_t views_launch(dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream)\n' \
        in module.cu and "void **args = nullptr;" in module.cu
    assert "int *ints = ints_array + 1;" in module.cu
    module.views[1, 1, 0, 12]()
    assert "2.500000 7 2\n" in capfd.readouterr().out


@pytest.mark.needs("g++")
def test_tuples_iterated_and_indexed_at_run_time_as_numba_does():
    """`for off in (16, 8, 4)`, `for d in OFFSETS`, `for x in t` (a UniTuple parameter) and `t[k]`, `t[-k]`:
    Numba compiles a switch over the index; translated as a chain of conditionals, checked against njit."""
    import numba

    def body(xi, t):  # real_world_constructs.tuples, one thread's work
        s = 0
        for off in (16, 8, 4):
            s += xi // off
        for d in (2, -1, 3):
            s = s * 3 + d
        for v in t:
            s += v * xi
        k = abs(xi) % 3
        return s + (2, -1, 3)[k] + t[-1 - k] * 100

    module = load_cpu(Path(__file__).parent / "verify_fixtures" / "real_world_constructs.py")
    body_c = kernel_text(module.cu, "tuples")
    assert "for (int64_t off_index = 0; off_index < 3; ++off_index)" in body_c
    assert "off_index == -3" not in body_c  # the translator's own counter never counts from the end
    x = np.arange(-40, 41, 3, dtype=np.int64)
    t = (5, -7, 11)
    out = np.zeros_like(x)
    module.tuples[1, 32](x, t, out)
    reference = numba.njit(body)
    assert out.tolist() == [reference(int(v), t) for v in x]


@pytest.mark.needs("g++")
def test_arrays_unpack_into_names_as_numba_iterates_them():
    """`x, y, z = st[i]` (mcvine's neutron state), `lo, hi = st[i, 1:]`, and rows of a 2-D array."""
    src = HEAD + '''
@cuda.jit("void(float64[:, ::1], float64[::1])")
def k(st, out):
    i = cuda.grid(1)
    if i < st.shape[0]:
        x, y, z = st[i]
        lo, hi = st[i, 1:]
        r0, r1 = st
        out[i] = x * 100 + y * 10 + z + lo - hi + r0[i % 3] - r1[0]
'''
    module = load_cpu(source=src)
    assert "const double *r0 = st;" in kernel_text(module.cu, "k")
    st = np.random.default_rng(3).standard_normal((5, 3))
    out = np.zeros(5)
    module.k[1, 8](st, out)
    expected = [x * 100 + y * 10 + z + y - z + st[0][i % 3] - st[1][0] for i, (x, y, z) in enumerate(st)]
    assert out.tolist() == expected


@pytest.mark.needs("g++")
def test_a_signature_of_arguments_only_as_numba_reads_it():
    """Numba evaluates "int32[:, :], int64" to a tuple of argument types (block-matching codes write it so)."""
    from numba.core import sigutils

    sig = "int32[:, :], float32[:, :], int64"
    assert sigutils.normalize_signature(sig)[1] is None  # Numba: arguments only, no return type
    src = HEAD + f'''
@cuda.jit("{sig}")
def k(a, b, n):
    i = cuda.grid(1)
    if i < n:
        b[i, 0] = a[i, 0] * 2
'''
    a = np.arange(8, dtype=np.int32).reshape(4, 2)
    b = np.zeros((4, 2), np.float32)
    load_cpu(source=src).k[1, 4](a, b, 3)
    assert b[:, 0].tolist() == [0, 4, 8, 0]


@pytest.mark.needs("g++")
def test_windows_of_2d_arrays_are_strided_views_passed_to_device_functions_too():
    """`_gpu(arr[i-1:i+2, j-1:j+2])` (xarray-spatial's stencils) and `src = p[i-b:i+b+1, j-b:j+b+1]` (block
    matching): a pointer to the window's corner whose rows are the array's rows apart; the device function
    given a window takes that pitch as a parameter. Checked against NumPy's own views."""
    src = HEAD + '''
@cuda.jit(device=True)
def stencil(w, cx):
    return (w[2, 2] + 2 * w[1, 0] + w[0, 2] - w[2, 0] - w[0, 0]) / cx + w.shape[1]

@cuda.jit("void(float64[:, ::1], float64, float64[:, ::1])")
def run(arr, cx, out):
    i, j = cuda.grid(2)
    if i >= 1 and i + 1 < out.shape[0] and j >= 1 and j + 1 < out.shape[1]:
        out[i, j] = stencil(arr[i - 1:i + 2, j - 1:j + 2], cx)

@cuda.jit("void(float32[:, ::1], float32[:, ::1], float32[:, :, ::1])")
def local(p, out, cube):
    i, j = cuda.grid(2)
    b = 1
    if i >= b and i + b < p.shape[0] and j >= b and j + b < p.shape[1]:
        src = p[i - b:i + b + 1, j - b:j + b + 1]
        s = 0.0
        for ii in range(src.shape[0]):
            for jj in range(src.shape[1]):
                s += src[ii, jj] * (ii + 1)
        row = src[1]
        plane = cube[1, i - b:i + b + 1, 1:3]
        out[i, j] = s + row[2] + src[2][0] + plane[2, 1] + len(row) + src[1:, :][1, 2]
'''
    module = load_cpu(source=src)
    assert "int64_t w_pitch1" in module.cu and "w[2 * w_pitch1 + 2]" in module.cu
    rng = np.random.default_rng(0)
    arr, out = rng.standard_normal((6, 7)), np.zeros((6, 7))
    module.run[(1, 1), (8, 8)](arr, 2.0, out)
    expected = np.zeros_like(out)
    for i in range(1, 5):
        for j in range(1, 6):
            w = arr[i - 1:i + 2, j - 1:j + 2]
            expected[i, j] = (w[2, 2] + 2 * w[1, 0] + w[0, 2] - w[2, 0] - w[0, 0]) / 2.0 + 3
    assert np.array_equal(out, expected)
    p, cube = rng.standard_normal((5, 6)).astype(np.float32), rng.standard_normal((3, 5, 4)).astype(np.float32)
    out = np.zeros((5, 6), np.float32)
    module.local[(1, 1), (8, 8)](p, out, cube)
    expected = np.zeros_like(out)
    for i in range(1, 4):
        for j in range(1, 5):
            w = p[i - 1:i + 2, j - 1:j + 2]
            s = sum(float(w[ii, jj]) * (ii + 1) for ii in range(3) for jj in range(3))
            expected[i, j] = s + float(w[1][2]) + float(w[2][0]) + float(cube[1, i - 1:i + 2, 1:3][2, 1]) + 3 \
                + float(w[1:, :][1, 2])
    assert np.array_equal(out, expected)


@pytest.mark.needs("g++")
def test_views_ending_on_an_integer_index_are_strided():
    """`dot(a[i, :], b[:, j])` (a column), `P = pixel_loc[0:3, x, y]` (a ray tracer's pixel), a 2-D view ending
    on an index, and views of those: a pointer to the first element whose last dimension steps over the
    dimensions it skipped (the view's step), passed to device functions with it, written and updated by
    atomics through it. Was: "a slice whose last dimension is an integer index ... which numba2cuda's views
    are not". Checked against NumPy's own views; the column's matrix product is verify_fixtures/
    real_world_constructs_4.py's `columns`, judged against Numba."""
    src = HEAD + '''
@cuda.jit(device=True)
def dot(u, v):
    s = 0.0
    for i in range(u.shape[0]):
        s += u[i] * v[i]
    return s

@cuda.jit(device=True)
def corner(w):
    return w[1, 0] + 10 * w[0, 1] + w.shape[0] * w.shape[1]

@cuda.jit("void(float64[:, :, ::1], float64[:, ::1], float64[:, ::1], int32[:, ::1])")
def pixel(p, out, m, hits):
    x, y = cuda.grid(2)
    if x < p.shape[1] and y < p.shape[2]:
        P = p[0:3, x, y]
        tail = P[1:]
        sq = p[1:3, 0:2, y]
        row = sq[1]
        out[x, y] = dot(P, P) + tail[0] + P[-1] + len(tail) + corner(sq) + row[1] + sq[1:, :][0, 1] + dot(row, row)
        col = m[:, y]
        col[x] = col[x] * 2 + x
        cuda.atomic.add(hits[:, 0], x, 1)
'''
    module = load_cpu(source=src)
    assert "int64_t v_step" in module.cu and "v[i * v_step]" in module.cu
    rng = np.random.default_rng(1)
    p, out, m = rng.standard_normal((4, 3, 2)), np.zeros((3, 2)), rng.standard_normal((3, 2))
    m0, hits = m.copy(), np.zeros((3, 2), np.int32)
    module.pixel[(1, 1), (4, 4)](p, out, m, hits)
    for x in range(3):
        for y in range(2):
            P, sq = p[0:3, x, y], p[1:3, 0:2, y]
            want = P @ P + P[1:][0] + P[-1] + 2 + (sq[1, 0] + 10 * sq[0, 1] + 4) + sq[1][1] + sq[1:, :][0, 1] \
                + sq[1] @ sq[1]
            assert out[x, y] == want
    assert np.array_equal(m, m0 * 2 + np.arange(3)[:, None])
    assert hits[:, 0].tolist() == [2, 2, 2] and not hits[:, 1].any()


@pytest.mark.needs("g++")
def test_a_tuple_a_device_function_returns_kept_in_one_name():
    """`ray_dir = matmul((R0, R1, R2), P)` then `normalize(ray_dir)` (a ray tracer), `pair = minmax(a, b)` then
    `lo, hi = pair`, and `acc = scale(acc, s)` in a loop: the name holds the call's results, each in a local of its
    own, passed on as a tuple. Was: "tuple variable: must be unpacked where it is made"."""
    src = HEAD + '''
import math

@cuda.jit(device=True)
def scale(v, s):
    return (v[0] * s, v[1] * s, v[2] * s)

@cuda.jit(device=True)
def norm(v):
    return math.sqrt(v[0] ** 2 + v[1] ** 2 + v[2] ** 2)

@cuda.jit(device=True)
def minmax(a, b):
    if a < b:
        return a, b
    return b, a

@cuda.jit("void(float64[:, ::1], float64[::1])")
def k(p, out):
    i = cuda.grid(1)
    if i < p.shape[0]:
        d = scale(p[i], 2.0)
        acc = (1.0, 1.0, 1.0)
        for j in range(3):
            acc = scale(acc, d[j])
        pair = minmax(p[i, 0], p[i, 1])
        lo, hi = pair
        out[i] = norm(d) + acc[2] + 10 * (hi - lo) + pair[0]
'''
    module = load_cpu(source=src)
    rng = np.random.default_rng(2)
    p, out = rng.standard_normal((5, 3)), np.zeros(5)
    module.k[1, 8](p, out)
    for i in range(5):
        d = [v * 2.0 for v in p[i]]
        acc = 1.0 * d[0] * d[1] * d[2]
        lo, hi = sorted(p[i, :2]) if p[i, 0] != p[i, 1] else (p[i, 1], p[i, 0])
        assert out[i] == math.sqrt(d[0] ** 2 + d[1] ** 2 + d[2] ** 2) + acc + 10 * (hi - lo) + lo


@pytest.mark.needs("g++")
@pytest.mark.parametrize("ndim", [2, 3])
def test_a_branch_on_the_arrays_dimension_count_is_decided_as_numba_decides_it(ndim):
    """A fluid solver's `k_fill` serves 2-D and 3-D arrays: `if arr.ndim == 3: arr[i, j, 0] = v ... else:
    arr[i, j] = v`. Numba rewrites `arr.ndim` to a constant and prunes the branch it rules out before typing, so
    the 3-D indexing of a 2-D array is never compiled; here it was "too many indices". A conditional expression
    is decided alike, and a test whose other operands are pure is decided by its constant part."""
    src = HEAD + '''
@cuda.jit
def k_fill(arr, value):
    i, j = cuda.grid(2)
    if 0 <= i < arr.shape[0] and 0 <= j < arr.shape[1]:
        if arr.ndim == 3:
            arr[i, j, 0] = value
            arr[i, j, 1] = value + (arr.shape[2] if arr.ndim > 2 else 0)
        elif i >= 0 and arr.ndim != 2:
            arr[i, j, 0] = -1.0
        else:
            arr[i, j] = value + (1.0 if not arr.ndim == 2 else arr.shape[1])
'''
    shape = (3, 4) if ndim == 2 else (3, 4, 2)
    types = f"arr=float64[{', '.join([':'] * (ndim - 1))}, ::1], value=float64"
    module = load_cpu(source=src, options=Options(types=parse_types_option(types)))
    arr = np.zeros(shape)
    module.k_fill[(1, 1), (4, 4)](arr, 2.0)
    if ndim == 2:
        assert (arr == 6.0).all()
    else:
        assert (arr[:, :, 0] == 2.0).all() and (arr[:, :, 1] == 4.0).all()


@pytest.mark.needs("g++")
def test_a_device_function_may_return_a_tuple_it_holds_in_a_name():
    """A volume renderer's camera: `ray_direction = normalize(...)`, `return ray_direction`, and a colour map's
    `color = (r, g, b, a)`, `return color`; callers keep the result and read `color[0]`. Returning a tuple held in a
    name was "tuple used as a value", and reading an item of the kept result "only arrays and constant tuples can
    be indexed". A function that returns another's tuple (`return normalize(d)`) is known to return one too. The
    kernel is real_world_constructs_4.camera (verified against Numba there); here it runs against Python's values."""
    module = load_cpu(Path(__file__).parent / "verify_fixtures" / "real_world_constructs_4.py")
    p, out = np.random.default_rng(3).standard_normal((6, 3)), np.zeros((6, 2))
    module.camera[1, 8](p, out)
    for i in range(5):
        v = [p[i + 1, k] - p[i, k] for k in range(3)]
        n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
        d = [x / n for x in v]
        n2 = math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
        x = p[i, 0]
        c = (x, 2.0 * x, 0.5) if x >= 0 else (0.0, -x, 1.0)
        assert out[i].tolist() == [d[0] + c[1] + d[2] / n2 + p[i, 2], c[0] * c[2]]
    assert "return {d_0, d_1, d_2};" in module.cu and "return {normalize_0, normalize_1, normalize_2};" in module.cu


@pytest.mark.needs("g++")
def test_a_name_that_holds_a_number_in_one_branch_and_a_tuple_in_another():
    """A swarm simulation's `accelerator`: in a loop, `acc = clusters(...)` (a number) under one branch and
    `acc = boids(...)` (a 3-tuple) under its `elif`, each used only there. Numba's SSA gives each binding its own type
    where they never meet; the message said "'acc' reassigned: it holds a tuple of 3 and now gets a number". Where
    the bindings do meet (read after the branches), it stays an error, as Numba's unification refuses it; in one
    block, a number after a tuple is a binding of its own (numba.cuda.compile_ptx accepts both, checked here)."""
    src = HEAD + '''
@cuda.jit(device=True)
def clusters(d):
    return 2.0 * d

@cuda.jit(device=True)
def boids(d, x):
    return (d, x, d * x)

@cuda.jit("void(float64[::1], int64[::1], float64[:, ::1])")
def accelerator(x, kind, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        for j in range(3):
            if kind[i] == 0:
                acc = clusters(x[i] + j)
                out[i, 0] += acc
            elif kind[i] == 1:
                acc = boids(x[i], j)
                out[i, 0] += acc[0] + acc[2]
            else:
                acc = (1.0, 2.0)
                out[i, 1] += acc[1]
            if j == 2:
                acc = clusters(1.0)
                out[i, 1] += acc
'''
    module = load_cpu(source=src)
    x, kind, out = np.array([0.5, 1.5, 2.5]), np.array([0, 1, 2]), np.zeros((3, 2))
    module.accelerator[1, 4](x, kind, out)
    assert out[0].tolist() == [2 * 0.5 + 2 * 1.5 + 2 * 2.5, 2.0]
    assert out[1].tolist() == [sum(1.5 + 1.5 * j for j in range(3)), 2.0]
    assert out[2].tolist() == [0.0, 3 * 2.0 + 2.0]
    from translator.errors import UserError
    with pytest.raises(UserError, match="'acc' reassigned: it held a tuple of 3 and now gets 2"):
        translate_source(src.replace("                out[i, 1] += acc\n", "                out[i, 1] += acc\n"
                                     "            out[i, 0] += acc\n"))
    # in one block, a tuple result then a number (`r = halves(a, b)`, `r = r[1] + 1`): Numba compiles it
    straight = load_cpu(source=HEAD + '''
@cuda.jit(device=True)
def halves(a, b):
    return a * 0.5, b * 0.5

@cuda.jit("void(float32[::1], float32[::1])")
def first_half(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        r = halves(x[i], 2 * x[i])
        r = r[1] + 1
        out[i] = r
''')
    x, out = np.array([3.0, 1.0, 2.0], np.float32), np.zeros(3, np.float32)
    straight.first_half[1, 4](x, out)
    assert out.tolist() == [4.0, 2.0, 3.0]


@pytest.mark.needs("g++")
def test_locals_and_tuples_assigned_in_several_branches_are_declared_before_them():
    """cuSignal's convolutions: `pos = (int32(i + k), int32(j + l))` assigned in loops under if/elif/else, and a
    scalar first assigned in two branches. Both used to be declared inside the first branch only (nvcc:
    "identifier is undefined"); a tuple assigned twice was an error."""
    src = HEAD + '''
@cuda.jit("void(float64[:, ::1], int64, float64[::1])")
def k(inp, pick, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        temp = 0.0
        if pick == 1:
            for k in range(3):
                a = int32(i + k)
                temp += inp[a, 0]
        elif pick == 2:
            for k in range(2):
                a = int32(i + k)
                pos = (a, int32(1))
                temp += inp[pos]
        else:
            pos = (i, 0)
            for k in range(2):
                pos = (pos[0] + k, pos[1] + 1)
                temp += inp[pos]
        out[i] = temp
'''
    module = load_cpu(source=src)
    body = kernel_text(module.cu, "k")
    assert body.index("int a;") < body.index("if (pick == 1)")
    inp = np.random.default_rng(5).standard_normal((8, 4))
    for pick in (1, 2, 3):
        out = np.zeros(4)
        module.k[1, 4](inp, pick, out)
        expected = []
        for i in range(4):
            if pick == 1:
                expected.append(sum(inp[i + k, 0] for k in range(3)))
            elif pick == 2:
                expected.append(sum(inp[i + k, 1] for k in range(2)))
            else:
                pos, t = (i, 0), 0.0
                for k in range(2):
                    pos = (pos[0] + k, pos[1] + 1)
                    t += inp[pos]
                expected.append(t)
        assert out.tolist() == expected, pick


def test_a_local_bound_only_by_an_annotated_assignment_is_a_local():
    """`t: x.dtype = x[i]` with no other assignment of t (cuSignal's filters) was 'unknown name'."""
    src = HEAD + '''
@cuda.jit("void(float64[::1], float64[::1])")
def k(x, y):
    i = cuda.grid(1)
    if i < x.size:
        t: x.dtype = x[i]
        y[i] = t * 2
'''
    body = kernel_text(translate_source(src), "k")
    assert "double t = x[i];" in body and "y[i] = t * 2;" in body


@pytest.mark.needs("g++")
@pytest.mark.parametrize("lo, hi, step", [(None, None, -1), (None, None, 2), (1, None, 3), (5, 1, -2), (2, 9, 2),
                                          (9, None, -1), (0, 0, -1), (None, 3, -1), (3, None, -3), (7, 2, 1),
                                          (-1, None, -2), (-3, None, 1), (None, -1, 1), (1, -1, 1), (-20, None, -1),
                                          (None, -20, -1), (-2, -7, -1), (-9, 3, 2), (None, -20, 1), (-3, -1, 1)])
def test_a_slice_with_a_step_counts_its_elements_as_python_does(lo, hi, step):
    """numba-cuda's shared-memory test writes a slice backwards (`dynsmem[1::-1]`, `dynsmem[-1::-2]`); a reversed
    row (`x[::-1]`), every other element (`m[i, 1::2]`), all but the last (`x[:-1]`): a view whose elements lie
    STEP apart (was 'only step 1 slices'), whose negative bounds count from the end (were refused: 'slices with
    negative bounds are not supported'), constant or read at run time (`x[b[0]:b[1]:-2]`)."""
    spelt = f"{'' if lo is None else lo}:{'' if hi is None else hi}:{step}"
    src = HEAD + f'''
@cuda.jit("void(float32[::1], float32[:, ::1], float32[::1], int64[::1], int64[::1])")
def k(x, m, out, count, b):
    i = cuda.grid(1)
    if i == 0:
        r = x[{'b[0]' if lo is not None else ''}:{'b[1]' if hi is not None else ''}:{step}]
        count[3] = len(r) * 1000 + (r[0] if len(r) > 0 else -1)
        v = x[{spelt}]
        count[0] = len(v)
        for j in range(v.shape[0]):
            out[j] = v[j]
        w = m[1, {spelt}]
        count[1] = w.size
        if w.size > 0:
            w[0] = -1.0
        sm = cuda.shared.array(8, float32)
        for j in range(8):
            sm[j] = j
        s = sm[{spelt}]
        count[2] = len(s) * 1000 + (s[len(s) - 1] if len(s) > 0 else -1)
'''
    module = load_cpu(source=src)
    x = np.arange(1.0, 8.0, dtype=np.float32)
    m = np.arange(16.0, dtype=np.float32).reshape(2, 8)
    out, count = np.zeros(8, np.float32), np.zeros(4, np.int64)
    module.k[1, 4](x, m, out, count, np.array([lo or 0, hi or 0], np.int64))
    sl = slice(lo, hi, step)
    want_m = np.arange(16.0, dtype=np.float32).reshape(2, 8)
    if want_m[1, sl].size:
        want_m[1, sl][0] = -1.0
    s = np.arange(8.0)[sl]
    assert count.tolist() == [len(x[sl]), len(m[1, sl]), len(s) * 1000 + (s[-1] if len(s) else -1),
                              len(x[sl]) * 1000 + (x[sl][0] if len(x[sl]) else -1)]
    assert out[:len(x[sl])].tolist() == x[sl].tolist() and np.array_equal(m, want_m)


@pytest.mark.needs("g++")
def test_a_device_function_returning_a_view_of_its_argument_gives_that_view():
    """numba-cuda's test_overload_array_return: an overload (inline="always") whose implementation returns
    `a[:, 0]`, and an inlined helper returning a row (`return m[i]`); the kernel writes through the view. Both were
    'subscript: only arrays and constant tuples can be indexed' at the view's use. An argument with an effect is
    computed once. Without inline="always" numba-cuda refuses such a function, and so does the translation."""
    src = HEAD + '''
from numba.cuda.extending import overload

def first_column(a):
    pass

@overload(first_column, inline="always")
def first_column_impl(a):
    def impl(a):
        return a[:, 0]
    return impl

@cuda.jit(device=True, inline="always")
def row(m, i):
    """Row i of m."""
    return m[i]

@cuda.jit(device=True, inline="always")
def tail(v, k):
    return v[k:]

@cuda.jit
def k(m, out, cnt):
    i = cuda.grid(1)
    if i < m.shape[0]:
        r = row(m, i)
        c = first_column(m)
        out[i] = r[1] + c[i] + len(tail(r, i)) * 1000
        c[i] += 0.5
        t = tail(r, cuda.atomic.add(cnt, 0, 1) * 0 + 1)
        out[i] += len(t) * 100
'''
    module = load_cpu(source=src, options=Options(types=parse_types_option(
        "m=float64[:, ::1], out=float64[::1], cnt=int64[::1]")))
    m = np.arange(12.0).reshape(4, 3)
    out, cnt = np.zeros(4), np.zeros(1, np.int64)
    module.k[1, 4](m.copy(), out, cnt)
    want = m[:, 1] + m[:, 0] + np.array([len(m[i, i:]) for i in range(4)]) * 1000 + 200
    assert out.tolist() == want.tolist() and cnt[0] == 4
    written = m.copy()
    module.k[1, 4](written, out, cnt)
    assert written[:, 0].tolist() == (m[:, 0] + 0.5).tolist() and np.array_equal(written[:, 1:], m[:, 1:])
    with pytest.raises(UserError, match="returns a view of its argument, which numba-cuda compiles only where"):
        plain = src.replace('@cuda.jit(device=True, inline="always")\ndef row', "@cuda.jit(device=True)\ndef row")
        translate_source(plain, "views.py", Options(types=parse_types_option(
            "m=float64[:, ::1], out=float64[::1], cnt=int64[::1]")))


@pytest.mark.needs("g++")
def test_flat_reads_an_array_in_c_order():
    """`abs(u.flat[idx])` over a 3-D field (a flow solver's time-step reduction) and `for x in u.flat:` were
    'array attribute .flat: only .shape, .size, .ndim, .dtype and .T are supported'."""
    module = load_cpu(source=HEAD + '''
@cuda.jit
def vmax(u, v, out, total):
    stride = cuda.blockDim.x * cuda.gridDim.x
    idx = cuda.grid(1)
    m = np.float32(0.0)
    while idx < u.size:
        m = max(m, abs(u.flat[idx]) + v.flat[idx])
        idx += stride
    out[cuda.grid(1)] = m
    if cuda.grid(1) == 0:
        for x in u.flat:
            total[0] += x
''', options=Options(types=parse_types_option(
        "u=float32[:, :, ::1], v=float64[::1], out=float64[::1], total=float64[::1]")))
    rng = np.random.default_rng(3)
    u = rng.standard_normal((3, 4, 5)).astype(np.float32)
    v = rng.standard_normal(60)
    out, total = np.zeros(8), np.zeros(1)
    module.vmax[1, 8](u, v, out, total)
    flat = np.abs(u.ravel()).astype(np.float64) + v
    assert out.tolist() == [max([0.0] + flat[t::8].tolist()) for t in range(8)]
    assert total[0] == sum(float(x) for x in u.ravel())
    with pytest.raises(UserError, match="not their order in memory"):
        translate_source(HEAD + '''
@cuda.jit("void(float32[:, ::1], float32[::1])")
def k(u, out):
    out[0] = u[:, 1:].flat[3]
''', "flat.py", Options())


@pytest.mark.needs("g++")
def test_a_dtype_string_names_the_array_type():
    """numba-cuda's test_string_dtype: `cuda.local.array(10, dtype="int32")` and a shared array of "float64", which
    numba-cuda reads with np.dtype (so "byte" is int8, "int" int64, "<f8" float64); they were 'array dtype: must
    be a NumPy or Numba scalar type'."""
    module = load_cpu(source=HEAD + '''
@cuda.jit("void(int32[::1], float64[::1], int64[::1])")
def f(x, y, z):
    l = cuda.local.array(10, dtype="int32")
    s = cuda.shared.array(4, "<f8")
    b = cuda.local.array(2, dtype="byte")
    w = cuda.local.array(2, dtype="int")
    l[0] = x[0] * 3
    s[0] = y[0] / 3
    b[0] = z[0]
    w[0] = z[0] * 2**40
    x[0] = l[0]
    y[0] = s[0]
    z[0] = b[0]
    z[1] = w[0]
''')
    assert "int l[10];" in module.cu and "__shared__ double s[4];" in module.cu and "int8_t b[2];" in module.cu
    x, y, z = np.array([2**30], np.int32), np.array([1.0]), np.array([200, 0])
    module.f[1, 1](x, y, z)
    assert x[0] == np.int32(-(2**30)) and y[0] == 1.0 / 3 and z.tolist() == [-56, 200 * 2**40]


@pytest.mark.needs("g++")
def test_reshape_is_a_view_of_the_same_memory():
    """numba-cuda's test_issue3931 reshapes an array in the kernel (`arr.reshape(3 * 2)`, `.reshape(3, 2)`); it was
    'array attribute .reshape: only .shape, .size ... are supported'. A computed extent (`(2, -1)`: n // 2) keeps
    its parentheses where it multiplies an index."""
    module = load_cpu(source=HEAD + '''
@cuda.jit("void(float64[:, ::1], float64[:, ::1], float64[::1])")
def k(result, arr, flat):
    a = arr.reshape(3 * 2)
    b = a.reshape(3, 2)
    c = flat.reshape((2, -1))
    for i in range(b.shape[0]):
        for j in range(b.shape[1]):
            result[i, j] = b[i, j] + a[i * 2 + j] * 10 + c[j % 2, i] * 100 + c.shape[1] * 1000
    c[1, 0] = -1.0
''')
    assert "c[j % 2 * (flat_shape0 / 2) + i]" in module.cu
    arr, flat = np.arange(6.0).reshape(2, 3), np.arange(10.0, 16.0)
    result, written = np.zeros((3, 2)), flat.copy()
    module.k[1, 1](result, arr, written)
    a, c = arr.reshape(6), flat.reshape(2, -1)
    want = [[a.reshape(3, 2)[i, j] + a[i * 2 + j] * 10 + c[j % 2, i] * 100 + 3000 for j in range(2)] for i in range(3)]
    assert result.tolist() == want and written[3] == -1.0
    # sizes read at run time: where they disagree Numba's reshape raises ValueError, which ends the thread
    checked = load_cpu(source=HEAD + '''
@cuda.jit("void(float64[::1], float64[::1], int64[::1])")
def k(a, out, b):
    out[0] = 1
    r = a.reshape(b[0], b[1])
    out[1] = r[1, 1]
    z = a.reshape(b[2], -1)
    out[2] = z.shape[1]
    g = a.reshape((-1,))
    out[3] = g.size
''')
    for b, want in (([2, 4, 4], [1, 5, 2, 8]), ([3, 2, 4], [1, 0, 0, 0]), ([4, 2, 3], [1, 3, 0, 0]),
                    ([-2, -4, 2], [1, 0, 0, 0]), ([-1, 4, 2], [1, 5, 4, 8])):  # a -1 read at run time is unknown too
        out = np.zeros(4)
        checked.k[1, 1](np.arange(8.0), out, np.array(b))
        assert out.tolist() == want, (b, out)


@pytest.mark.needs("g++")
def test_a_named_view_keeps_the_extent_it_was_made_with():
    """`t = a[lo:]` then `lo = 5`: len(t) re-read lo (3 where Numba gives 7); `u = a[b[1]:]` re-read b[1] after a
    write to it; `a[cuda.atomic.add(cnt, 0, 1) + 1:]` ran the atomic twice. And a row view nothing reads
    (`w = out[t, 1:]`) crashed the legalizer (exit 70)."""
    module = load_cpu(source=HEAD + '''
@cuda.jit("void(float64[::1], float64[::1], int64[::1], int64, int64[::1], float64[:, ::1])")
def k(a, out, b, lo, cnt, m):
    t = a[lo:]
    lo = 5
    out[0] = len(t)
    u = a[b[1]:]
    b[1] = -1
    out[1] = len(u)
    out[2] = u[len(u) - 1]
    v = a[cuda.atomic.add(cnt, 0, 1) + 1:]
    out[3] = len(v)
    for i in range(3):
        w = a[i:]
        i = 0
        out[4 + i] += len(w)
    unused = m[cnt[0], 1:]
''')
    out, b, cnt = np.zeros(7), np.array([1, -3]), np.zeros(1, np.int64)
    module.k[1, 1](np.arange(8.0), out, b, 1, cnt, np.zeros((3, 4)))
    assert out.tolist() == [7, 3, 7, 7, 21, 0, 0] and cnt[0] == 1


VIEWS_OF_WHOLE_ARRAYS = HEAD + '''
@cuda.jit("void(float64[::1], float64[:, ::1], int64[:, ::1], int64[::1], float64[:, ::1])")
def views(a, m, b, cnt, out):
    t = cuda.grid(1)
    if t < b.shape[0]:
        out[t, 0] = 1
        lo = b[t, 0]
        v = a[lo:]
        lo = 3
        out[t, 1] = len(v)
        s = 0.0
        for x in m.flat:
            s += x
        out[t, 2] = s + m.flat[t % m.size]
        r = a.reshape(b[t, 0], b[t, 1])
        out[t, 3] = r[r.shape[0] - 1, r.shape[1] - 1]
        z = a.reshape(b[t, 1], -1)
        cuda.atomic.add(cnt, 0, 1)
        out[t, 4] = z.shape[1] + len(a[t % 3 - 2:])
'''


@pytest.mark.gpu
def test_gpu_views_of_whole_arrays_match_numba(tmp_path):
    """.flat, reshape (sizes that disagree, or a -1 read at run time, as Numba normalises them: a thread ends where
    Numba's ValueError is raised) and a named view's extent against numba-cuda on the GPU."""
    original, translated = numba_and_translation(tmp_path, "whole_views", VIEWS_OF_WHOLE_ARRAYS)
    b = np.array([(p, q) for p in (-2, 1, 2, 3, 4, 6) for q in (-1, 2, 3, 4)], np.int64)
    results = []
    for run in (original.views, translated.views):
        cnt, out = np.zeros(1, np.int64), np.zeros((len(b), 5))
        run[1, 32](np.arange(12.0), np.arange(6.0).reshape(2, 3), b, cnt, out)
        results.append((cnt, out))
    assert results[0][0][0] == results[1][0][0] and np.array_equal(results[0][1], results[1][1])


RAISING_DEVICE_FUNCTIONS = HEAD + '''
@cuda.jit(device=True)
def checked_sqrt(v):
    if v >= 0:
        return v ** 0.5
    raise ValueError("negative")

@cuda.jit(device=True)
def inner(v):
    assert v < 100, "too big"
    return checked_sqrt(v) + 1

@cuda.jit("void(float64[::1], float64[::1], float64[::1])")
def k(a, out, total):
    i = cuda.grid(1)
    s = cuda.shared.array(64, np.float64)
    s[cuda.threadIdx.x] = 0.0
    out[i] = -1.0
    r = inner(a[i])
    s[cuda.threadIdx.x] = r
    out[i] = r
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        t = 0.0
        for j in range(64):
            t += s[j]
        total[cuda.blockIdx.x] = t
'''


def _raising_expected(a):
    out = np.where((a < 0) | (a >= 100), -1.0, np.sqrt(np.abs(a)) + 1)
    s = np.where(out == -1.0, 0.0, out).reshape(2, 64)
    alive = out.reshape(2, 64)[:, 0] != -1.0  # thread 0 of a block writes its total only if it lives
    return out, np.where(alive, s.sum(axis=1), 0.0)


@pytest.mark.needs("g++")
def test_a_raise_in_a_device_function_ends_the_thread():
    """numba-cuda's test_exception raises in a device function; Numba returns an exception status that each
    caller, the kernel too, returns on, so the thread ends there and a barrier after it waits for the others only.
    That was refused ('Numba's exception leaves the kernel that called it too'); it is n2c::exit_thread(), PTX's
    exit (the CPU runtime ends the thread's fiber)."""
    module = load_cpu(source=RAISING_DEVICE_FUNCTIONS)
    assert "    n2c::exit_thread();  // <string>:9" in module.cu
    a = np.arange(-10.0, 118.0)
    out, total = np.zeros(128), np.zeros(2)
    module.k[2, 64](a, out, total)
    want_out, want_total = _raising_expected(a)
    assert np.array_equal(out, want_out) and np.allclose(total, want_total, rtol=1e-15)


@pytest.mark.gpu
def test_gpu_a_raise_in_a_device_function_matches_numba(tmp_path):
    original, translated = numba_and_translation(tmp_path, "raising", RAISING_DEVICE_FUNCTIONS)
    a = np.arange(-10.0, 118.0)
    results = []
    for run in (original.k, translated.k):
        out, total = np.zeros(128), np.zeros(2)
        run[2, 64](a, out, total)
        results.append((out, total))
    assert np.array_equal(results[0][0], results[1][0]) and np.array_equal(results[0][1], results[1][1])


NEGATIVE_SLICES = HEAD + '''
@cuda.jit(device=True)
def put(out, t, v, w):
    out[t, v, 0] = len(w)
    out[t, v, 1] = w[0] if len(w) > 0 else -1
    out[t, v, 2] = w[len(w) - 1] if len(w) > 0 else -1

@cuda.jit("void(float64[::1], int64[:, ::1], float64[:, :, ::1])")
def ends(x, b, out):
    t = cuda.grid(1)
    if t < b.shape[0]:
        lo, hi = b[t, 0], b[t, 1]
        put(out, t, 0, x[:-1])
        put(out, t, 1, x[-3:])
        put(out, t, 2, x[-1::-2])
        put(out, t, 3, x[lo:hi])
        put(out, t, 4, x[lo:hi:-1])
        put(out, t, 5, x[lo::3])
        put(out, t, 6, x[:hi:-2])
        put(out, t, 7, x[-9:-2])
'''


@pytest.mark.gpu
def test_gpu_negative_slice_bounds_match_numba(tmp_path):
    """Negative slice bounds, constant and read at run time, of step 1 and not: numba-cuda's against the
    translation, over bounds from before the start to past the end."""
    original, translated = numba_and_translation(tmp_path, "negative_slices", NEGATIVE_SLICES)
    x = np.arange(1.0, 12.0)
    b = np.array([(lo, hi) for lo in range(-14, 14, 3) for hi in range(-13, 14, 4)], np.int64)
    results = []
    for run in (original.ends, translated.ends):
        out = np.zeros((len(b), 8, 3))
        run[4, 32](x, b, out)
        results.append(out)
    assert np.array_equal(results[0], results[1])


def test_a_slice_past_the_end_is_clipped_as_python_clips_it():
    """`s3(a[i:i + 3])` near the end of `a` is shorter there (found by the real-world collection: the view's
    length was 3 everywhere, and the device function read past the array)."""
    src = HEAD + '''
@cuda.jit(device=True)
def s3(v):
    t = 0.0
    for k in range(v.shape[0]):
        t += v[k]
    return t

@cuda.jit("void(float64[::1], float64[::1])")
def k(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = s3(a[i:i + 3]) + 100 * len(a[i:i + 3]) + 1000 * len(a[i:2])
'''
    module = load_cpu(source=src)
    a = np.arange(1.0, 6.0)
    out = np.zeros(5)
    module.k[1, 8](a, out)
    assert out.tolist() == [a[i:i + 3].sum() + 100 * len(a[i:i + 3]) + 1000 * len(a[i:2]) for i in range(5)]
    # a named view's length whose stop needs a helper (Python's // of a value that may be negative): the
    # helper is in the file where the length is printed (it was dropped with the view's unprinted extents)
    src = HEAD + '''
@cuda.jit("void(float32[::1], int64, float32[::1])")
def half(a, n, out):
    m = n - 5
    v = a[:m // 2]
    out[0] = len(v)
'''
    a, out = np.zeros(10, np.float32), np.zeros(1, np.float32)
    load_cpu(source=src).half[1, 1](a, 14, out)
    assert out[0] == len(a[:(14 - 5) // 2])


@pytest.mark.needs("g++")
def test_a_cpu_jit_function_made_a_device_function_by_calling_cuda_jit_on_it():
    """`evolucion_gpu = cuda.jit(device=True)(evolucion)` of an `@jit(nopython=True)` function (numba-cuda
    unwraps the CPU dispatcher to its Python function), in a module indented with tabs and spaces, as CPython
    reads it (libcst refuses such indentation as written)."""
    src = ("from numba import cuda, jit\n\n"
           "@jit(nopython=True)\n"
           "def step(u, i):\n"
           "    return u[i] * 2.0 + 1.0\n\n"
           "step_gpu = cuda.jit(device=True)(step)\n\n"
           '@cuda.jit("void(float64[::1], float64[::1])")\n'
           "def k(u, out):\n"
           "\ti = cuda.grid(1)\n"
           "\tif i < u.shape[0]:\n"
           "\t\t\tout[i] = step_gpu(u, i)\n")
    module = load_cpu(source=src)
    u = np.arange(5.0)
    out = np.zeros(5)
    module.k[1, 8](u, out)
    assert out.tolist() == (u * 2.0 + 1.0).tolist()


@pytest.mark.needs("g++")
def test_a_device_function_bound_by_a_global_statement_in_a_setup_function():
    """Numba's slicing test and a Mandelbrot demo bind the module's device function inside a function:
    `global cufoo; cufoo = cuda.jit(device=True)(foo)`, the module's kernel calling cufoo."""
    src = HEAD + '''
def foo(inp, out):
    for i in range(out.shape[0]):
        out[i] = inp[i] * 3

@cuda.jit("void(int32[:, ::1], int32[:, ::1])")
def copy(inp, out):
    i = cuda.grid(1)
    cufoo(inp[i, :], out[i, :])

def setup():
    global cufoo
    cufoo = cuda.jit("void(int32[:], int32[:])", device=True)(foo)
'''
    module = load_cpu(source=src)
    inp = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = np.zeros_like(inp)
    module.copy[1, 3](inp, out)
    assert (out == inp * 3).all()


@pytest.mark.needs("g++")
def test_a_number_stored_into_a_slice_or_row_fills_every_element():
    """`aaa[:, :] = 0. + 0.j` (pyfk zeroes its local arrays so), `loc[1, 1:] = z`, `a[i, 1:] = a[i, 0] * 2`:
    Numba's setitem of a number into a view, the number evaluated once."""
    src = HEAD + '''
from numba import complex128

@cuda.jit("void(float32[:, ::1], complex128[::1])")
def k(a, out):
    i = cuda.grid(1)
    loc = cuda.local.array((2, 3), dtype=complex128)
    loc[:, :] = 0. + 0.j
    loc[1, 1:] = 1.5 + 2j
    if i < a.shape[0]:
        a[i, 1:] = a[i, 0] * 2
        out[i] = loc[0, 0] + loc[1, 2] + loc[1, 0]
'''
    module = load_cpu(source=src)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    expected = a.copy()
    expected[:, 1:] = expected[:, :1] * 2
    out = np.zeros(3, np.complex128)
    module.k[1, 4](a, out)
    assert np.array_equal(a, expected) and out.tolist() == [1.5 + 2j] * 3


def test_a_cpointer_parameter_is_a_pointer_and_the_runtimes_refuse_it_by_name():
    """numba-cuda's ex_cpointer: `types.void(types.CPointer(types.uint8), types.uint32)`, launched with an address.
    The kernel and its launcher take the pointer alone (no extent), indexed as is (no wraparound for x[-1]);
    the CPU runtime, like numba2cuda.load and verify, passes arrays, and says so."""
    from translator.errors import UserError

    src = '''from numba import cuda
from numba.cuda import types

sig = types.void(types.CPointer(types.uint8), types.uint32)

@cuda.jit(sig)
def add_one(x, n):
    i = cuda.grid(1)
    if i < n:
        x[i] += 1
    if i == 0:
        x[-1] = 7
'''
    cu = translate_source(src)
    assert "__global__ void add_one(uint8_t *x, unsigned int n)" in cu
    assert "uint8_t *x,\n    unsigned int n)" in cu and "x_shape0" not in cu  # the launcher: the address alone
    assert "x[-1] = 7u;" in cu
    with pytest.raises(UserError, match=r"kernel 'add_one' takes 'x' as a CPointer \(an address\)"):
        load_cpu(source=src)


@pytest.mark.needs("g++")
def test_a_row_view_at_a_negative_index_wraps_around_as_numba_does():
    """`r = a[idx]` with idx read from memory (pygamd's kernels) was `a + idx * a_shape1` with no wraparound, while
    `a[idx][1]` in the same kernel wrapped: a[-1] is the last row in both."""
    src = HEAD + '''
@cuda.jit("void(float64[:, ::1], int32[::1], float64[::1])")
def k(a, ix, out):
    i = cuda.grid(1)
    if i < ix.shape[0]:
        idx = ix[i]
        r = a[idx]
        out[i] = r[0] + 10 * a[idx][1] + 100 * a[idx, 2]
'''
    module = load_cpu(source=src)
    a = np.arange(12.0).reshape(4, 3)
    ix = np.array([0, 3, -1, -4], np.int32)
    out = np.zeros(4)
    module.k[1, 4](a, ix, out)
    assert out.tolist() == [a[j][0] + 10 * a[j][1] + 100 * a[j, 2] for j in ix]


@pytest.mark.needs("g++")
def test_a_kernel_called_from_a_kernel_is_a_device_function_there():
    """numba-cuda's test_inline and a Canny edge detector call a @cuda.jit kernel from another kernel: Numba
    compiles the callee as a device function for that call (each thread runs its body); it stays a kernel too."""
    src = HEAD + '''
@cuda.jit("void(float32[::1], int64)")
def set_zero(a, i):
    a[i] = 0

@cuda.jit("void(float32[::1])")
def call_set_zero(a):
    i = cuda.grid(1)
    if i < a.shape[0] and i % 2 == 0:
        set_zero(a, i)
'''
    module = load_cpu(source=src)
    assert "__global__ void set_zero(" in module.cu and "__device__ void set_zero_2(" in module.cu
    a = np.ones(7, np.float32)
    module.call_set_zero[1, 8](a)
    assert a.tolist() == [0, 1, 0, 1, 0, 1, 0]
    module.set_zero[1, 1](a, 1)
    assert a[1] == 0


@pytest.mark.needs("g++")
def test_const_array_like_of_an_argument_is_the_argument():
    """lbm-gpu writes `w = cuda.const.array_like(w_in)` of a kernel argument: Numba's lowering returns the array."""
    src = HEAD + '''
@cuda.jit("void(float32[::1], float32[::1])")
def eq(w_in, out):
    w = cuda.const.array_like(w_in)
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = w[i % w.shape[0]] * 2
'''
    module = load_cpu(source=src)
    w, out = np.array([1.5, 2.5, 4.0], np.float32), np.zeros(7, np.float32)
    module.eq[1, 8](w, out)
    assert out.tolist() == [w[i % 3] * 2 for i in range(7)]


DIVMOD = HEAD + '''
@cuda.jit("void(int64[::1], int64[::1], float64[::1], float64[::1], int64, float64)")
def split(q, r, fq, fr, n, d):
    i = cuda.grid(1)
    if i < q.shape[0]:
        a = i - 7
        b = n
        a, b = divmod(a, b)
        q[i] = a
        r[i] = b
        fq[i], fr[i] = divmod(fq[i], d)
'''


@pytest.mark.needs("g++")
@pytest.mark.parametrize("n, d", [(3, 2.5), (-4, -0.75)])
def test_divmod_is_floor_division_and_pythons_remainder(n, d):
    """divmod(a, b) (an ADACS kernel's index split) is Numba's (a // b, a % b), signs as Python's, for ints and
    floats, and `a, b = divmod(a, b)` reads both before it writes (was "call to divmod(): is not supported")."""
    import numba

    module = load_cpu(source=DIVMOD)
    q, r = np.zeros(16, np.int64), np.zeros(16, np.int64)
    fq = np.linspace(-5.5, 6.25, 16)
    fr = np.zeros(16)
    want = [divmod(i - 7, n) for i in range(16)]
    fwant = [numba.njit(lambda x, y: divmod(x, y))(x, d) for x in fq]
    module.split[1, 16](q, r, fq, fr, n, d)
    assert list(zip(q.tolist(), r.tolist())) == want
    assert list(zip(fq.tolist(), fr.tolist())) == [tuple(map(float, w)) for w in fwant]


@pytest.mark.needs("g++")
def test_an_empty_constant_array_has_length_0_and_numpys_dtypes():
    """numba-cuda's test_constmem bakes `np.array([])` (float64, as NumPy makes it): C has no arrays of size 0, so
    the .cu nvcc rejected (`CONST_EMPTY[0]`, typed int64) was an internal error; a list of bools is bool."""
    src = HEAD + '''
CONST_EMPTY = np.array([])
FLAGS = np.array([True, False, True])

@cuda.jit("void(float64[::1])")
def lengths(A):
    C = cuda.const.array_like(CONST_EMPTY)
    F = cuda.const.array_like(FLAGS)
    i = cuda.grid(1)
    if i < A.shape[0]:
        A[i] = len(C) + F[i % 3] + C.shape[0]
'''
    module = load_cpu(source=src)
    assert "__constant__ double CONST_EMPTY[1] = {};  // empty: its length is 0" in module.cu
    assert "__constant__ bool FLAGS[3] = {true, false, true};" in module.cu
    out = np.full(5, -1.0)
    module.lengths[1, 8](out)
    assert out.tolist() == [1, 0, 1, 1, 0]


@pytest.mark.needs("g++")
def test_types_functions_and_array_sizes_passed_to_a_device_function_are_compiled_in():
    """numba-cuda's atomics tests pass a dtype, an array size, cuda.atomic.add and a device function to one device
    function (real_world_constructs_2.shared_op); Numba compiles a copy per such binding, and so does the
    translation (was: 'type argument')."""
    module = load_cpu(Path(__file__).parent / "verify_fixtures" / "real_world_constructs_2.py")
    cu = module.cu
    assert "__shared__ unsigned int sm[nelem];" in cu and "__shared__ double sm[nelem];" in cu
    assert "atomicAdd(&sm[" in cu and "n2c::atomic_max(&sm[" in cu
    assert "int64_t b = n2c::mod(cast_int(n2c::float_mod<double>(idx[tid], nelem)), nelem);" in cu
    idx = np.arange(32, dtype=np.uint32) * 3
    ary = np.zeros(32, np.uint32)
    module.atomic_bins[1, 32](idx, ary)
    want = np.zeros(32, np.uint32)
    np.add.at(want, (np.arange(32) * 3) % 32, 1)
    assert ary.tolist() == want.tolist()
    fidx = np.arange(32, dtype=np.float64) * 2.5
    out = np.zeros(32)
    module.atomic_peaks[1, 32](fidx, out)
    hit = set(int(v % 32) for v in fidx)
    assert out.tolist() == [1.5 if t in hit else -1.0 for t in range(32)]


@pytest.mark.needs("g++")
def test_zip_of_an_enumerate_unpacks_into_a_nested_target():
    """`for (i, xv), yv in zip(enumerate(x), y)` (numba-cuda's iterator tests): the enumerate's index is the loop
    counter (was 'zip() gives 2 items: unpack them into 2 names', which it already did)."""
    module = load_cpu(source='''
from numba import cuda

@cuda.jit("void(float64[::1], float64[::1], float64[::1])")
def zipped(x, y, out):
    for (i, xv), yv in zip(enumerate(x), y):
        out[i] = xv * yv + i
''')
    x, y, out = np.arange(6.0), np.arange(4.0) + 0.5, np.full(6, -1.0)
    module.zipped[1, 1](x, y, out)
    assert out.tolist() == [x[i] * y[i] + i for i in range(4)] + [-1.0, -1.0]


@pytest.mark.needs("g++")
def test_a_power_of_a_literal_base_keeps_numbas_int64():
    """`(index & 2**ctrl) // 2**ctrl` (a quantum simulator's bit test): 2 ** k is int64 in Numba, but C deduced
    n2c::ipow's type from the literal 2 (an int), and n2c::floordiv(int64_t, int) matched no template: nvcc
    refused it, exit 70."""
    module = load_cpu(source='''
from numba import cuda

@cuda.jit(device=True)
def extract_bit(ctrl, index):
    return (index & (2**ctrl)) // (2**ctrl)

@cuda.jit("void(int64[::1], int64)")
def bits(out, ctrl):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = extract_bit(ctrl, i) + 3 ** ctrl
''')
    assert "n2c::ipow((int64_t)2, ctrl)" in module.cu
    out = np.zeros(16, np.int64)
    module.bits[1, 32](out, 2)
    assert out.tolist() == [((i >> 2) & 1) + 9 for i in range(16)]


@pytest.mark.needs("g++")
def test_default_parameter_values():
    """A device function called without its defaulted arguments gets the defaults, as Numba compiles them in, and
    a keyword argument binds its parameter; a kernel's default is noted (a launch passes every argument). Both
    were errors ('cannot have defaults', 'pass them positionally')."""
    module = load_cpu(source='''
from numba import cuda

@cuda.jit(device=True)
def scaled(x, k=2.0, off=1):
    return x * k + off

@cuda.jit("void(float64[::1], float64)")
def kern(a, eps=0.5):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = scaled(a[i]) + scaled(a[i], 3.0) + eps + scaled(0.0, off=2) - 2
''')
    assert "a[i] = scaled(a[i], 2.0, 1) + scaled(a[i], 3.0, 1) + eps + scaled(0.0, 2.0, 2) - 2;" in module.cu
    a = np.arange(4.0)
    module.kern[1, 32](a, 0.25)
    assert a.tolist() == [(x * 2 + 1) + (x * 3 + 1) + 0.25 for x in range(4)]  # scaled(0.0, off=2) - 2 is 0


@pytest.mark.needs("g++")
def test_tuple_slices_and_the_rows_of_a_2d_array():
    """`ny, nx = a.shape[2:4]` (gpu_specter), `t[::-1]`, and `for row in nb:` over a 2-D array (a path finder's
    neighbour table): Numba slices a tuple with constant bounds and iterates a 2-D array by its row views. Both
    were refused ('tuple slice', 'iterating it yields row views')."""
    module = load_cpu(source='''
from numba import cuda, int32

@cuda.jit("void(float64[:, :, :, ::1], float64[:, ::1], float64[::1])")
def k(a, g, out):
    ny, nx = a.shape[2:4]
    t = (1, 2, 3, 4)
    r = t[::-1]
    nb = cuda.local.array((4, 2), int32)
    for j in range(4):
        nb[j, 0] = j
        nb[j, 1] = 3 - j
    s = 0.0
    for row in nb:
        s += g[row[0], row[1]]
    for i, grow in enumerate(g):
        out[i] = s + grow[0] + ny * 10 + nx + r[0] + len(t[1:])
''')
    g = np.arange(16.0).reshape(4, 4)
    out = np.zeros(4)
    module.k[1, 1](np.zeros((1, 1, 5, 6)), g, out)
    s = sum(g[j, 3 - j] for j in range(4))
    assert out.tolist() == [s + g[i, 0] + 56 + 4 + 3 for i in range(4)]


def numba_round_ndigits(x: float, ndigits: int) -> float:
    """numba-cuda's round(x, ndigits) (CPython's fallback double_round), step for step in float64."""
    if math.isinf(x) or math.isnan(x):
        return x
    if ndigits >= 0:
        pow1, pow2 = (10.0 ** (ndigits - 22), 1e22) if ndigits > 22 else (10.0 ** ndigits, 1.0)
        y = (x * pow1) * pow2
        if math.isinf(y):
            return x
    else:
        pow1 = 10.0 ** -ndigits
        y = x / pow1
    z = float(round(y))
    if math.fabs(y - z) == 0.5:
        z = 2.0 * round(y / 2.0)
    return (z / pow2) / pow1 if ndigits >= 0 else z * pow1


ROUNDING = '''
from numba import cuda

@cuda.jit("void(float64[::1], float32[::1], int64[::1], float64[::1], float32[::1])")
def rounding(x, x32, n, out, out32):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = round(x[i], n[i])
        out32[i] = round(x32[i], n[i])
'''


@pytest.mark.needs("g++")
def test_round_with_ndigits_follows_numba_cuda():
    """round(x, n) of numba-cuda's intrinsics tests: its float64 scaling and half-to-even rounding, x's type back
    (was 'round() with ndigits: only round(x) is supported')."""
    module = load_cpu(source=ROUNDING)
    assert "n2c::round_ndigits(x[i], n[i])" in module.cu
    x = np.array([2.675, 1.5, 2.5, -0.5, 1234.5678, 1234.5678, 0.125, float("inf"), 1e300, -7.45])
    n = np.array([2, 0, 0, 0, -2, 2, 2, 3, 30, 1], np.int64)
    with np.errstate(over="ignore"):  # 1e300 is inf in float32
        x32 = x.astype(np.float32)
    out, out32 = np.zeros_like(x), np.zeros_like(x32)
    module.rounding[1, 32](x, x32, n, out, out32)
    assert out.tolist() == [numba_round_ndigits(float(v), int(k)) for v, k in zip(x, n)]
    with np.errstate(over="ignore"):  # 1e300 is inf in float32
        assert out32.tolist() == [float(np.float32(numba_round_ndigits(float(v), int(k)))) for v, k in zip(x32, n)]


@pytest.mark.gpu
def test_gpu_round_with_ndigits_matches_numba(tmp_path):
    """round(x, n) on the GPU: the translation against numba-cuda's own, on values near halfway points."""
    original, translated = numba_and_translation(tmp_path, "rounding", ROUNDING)
    rng = np.random.default_rng(7)
    n = rng.integers(-3, 6, 4000).astype(np.int64)
    x = np.round(rng.standard_normal(4000) * 1000, 3) + rng.choice([0.0, 0.0005, -0.0005, 5e-4 + 1e-12], 4000)
    x32 = x.astype(np.float32)
    results = []
    for run in (original.rounding, translated.rounding):
        out, out32 = np.zeros_like(x), np.zeros_like(x32)
        run[32, 128](x, x32, n, out, out32)
        results.append((out, out32))
    assert np.array_equal(results[0][0], results[1][0]) and np.array_equal(results[0][1], results[1][1])


@pytest.mark.needs("g++")
def test_enumerate_of_a_range_and_a_kernel_default_typed_from_its_literal():
    """`for iy, y in enumerate(range(iyc, iyc + ny))` (gpu_specter) was 'only 1-D arrays and their views are
    iterated'; a kernel parameter `eps=1e-5` with no other type is float64, what Numba makes of the float a launch
    passes."""
    module = load_cpu(source='''
from numba import cuda

@cuda.jit
def k(A, iyc, ny, eps=0.5):
    for iy, y in enumerate(range(iyc, iyc + ny)):
        A[iy, 0] = y + eps
''', options=Options(types=parse_types_option("A=float64[:, ::1], iyc=int64, ny=int64")))
    assert "double eps" in module.cu
    A = np.zeros((4, 2))
    module.k[1, 1](A, 10, 3, 0.25)
    assert A[:, 0].tolist() == [10.25, 11.25, 12.25, 0.0]


def test_a_nonlocal_the_kernel_only_reads_is_the_closure_value():
    """`nonlocal scale` in a kernel that only reads scale (a systems biology simulator): Python and Numba read
    the enclosing function's value; numba2cuda refused every nonlocal statement."""
    text = translate_source(textwrap.dedent("""
        from numba import cuda

        def build():
            scale = 3

            @cuda.jit("void(float64[::1])")
            def kern(a):
                nonlocal scale
                i = cuda.grid(1)
                if i < a.shape[0]:
                    a[i] = a[i] * scale
            return kern

        k = build()
    """), "mod.py", Options())
    assert "static constexpr int64_t scale = 3;" in text and ("* scale;" in text or "*= scale;" in text)


def test_a_debugger_stop_for_the_simulator_is_dropped_with_a_note():
    """numba-cuda's simulator docs stop one thread in pdb (`from pdb import set_trace; set_trace()` inside the
    kernel); the simulator runs it in Python, compiled CUDA has no such stop (was 'imports belong at module
    level')."""
    info = parse_source(textwrap.dedent("""
        from numba import cuda

        @cuda.jit("void(float32[::1], float32[::1], float32[::1])")
        def vec_add(A, B, out):
            x = cuda.threadIdx.x
            bx = cuda.blockIdx.x
            if x == 1 and bx == 3:
                from pdb import set_trace; set_trace()
            if x == 2:
                breakpoint()
            i = bx * cuda.blockDim.x + x
            out[i] = A[i] + B[i]
    """), "mod.py")
    from translator.emit.render import render_program
    from translator.lower.program import build_program

    program = build_program(info, Options())
    text = render_program(program, "mod.py")
    assert "set_trace" not in text.split("#include", 1)[1] and "out[i] = A[i] + B[i];" in text
    notes = [n for fn in info.functions.values() for n in fn.notices]
    assert [n.construct for n in notes] == ["set_trace()", "breakpoint()"]


@pytest.mark.needs("g++")
def test_raise_and_assert_in_a_kernel_stop_the_thread():
    """Numba compiles a raise (and a failed assert) as the kernel function's return with an exception status,
    which nothing reads without debug=True: the thread stops there, the launch goes on (numba-cuda's tests of
    issue 7806). Both were refused; they are now the thread's return, with a note."""
    from translator.runtime.cpu_launch import load_cpu

    module = load_cpu(source='''
from numba import cuda

@cuda.jit("void(float64[::1], float64[::1])")
def checked_sqrt(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = -1.0
        if x[i] < 0:
            raise ValueError("negative input")
        assert x[i] < 100.0, "too large"
        out[i] = x[i] ** 0.5
''')
    x = np.array([4.0, -1.0, 400.0, 9.0])
    out = np.zeros(4)
    module.checked_sqrt[1, 32](x, out)
    assert out.tolist() == [2.0, -1.0, -1.0, 3.0]
    assert "return;" in module.cu


@pytest.mark.needs("g++")
def test_membership_in_a_tuple_of_numbers():
    """`n in SURVIVE` (a game of life's rule; Numba compares with each item): was "'in' comparison: only <, <=,
    >, >=, ==, != compare numbers". A list literal searched so (`neighbors not in [3, 4]`) was "list literal:
    kernels cannot build Python lists"."""
    from translator.runtime.cpu_launch import load_cpu

    module = load_cpu(source='''
import numpy as np
from numba import cuda

BIRTH = (3,)
SURVIVE = (2, 3)

@cuda.jit("void(uint8[:, ::1], uint8[:, ::1])")
def life(grid, out):
    y, x = cuda.grid(2)
    h, w = grid.shape
    if y < h and x < w:
        n = 0
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                if dy != 0 or dx != 0:
                    n += grid[(y + dy) % h, (x + dx) % w]
        alive = grid[y, x] == 1
        if (alive and n in SURVIVE) or (not alive and n in BIRTH):
            out[y, x] = 1
        elif n not in [0, 1, 2, 3, 4]:  # a list searched at once, as automata-vtk writes it
            out[y, x] = 2
        else:
            out[y, x] = 0
''')
    assert "(n == 2 || n == 3)" in module.cu and "n != 0 && n != 1 && n != 2" in module.cu
    g = (np.random.default_rng(1).random((12, 16)) < 0.4).astype(np.uint8)
    out = np.zeros_like(g)
    module.life[(2, 2), (8, 8)](g, out)
    n = sum(np.roll(np.roll(g.astype(int), dy, 0), dx, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx)
    assert np.array_equal(out, np.where(((g == 1) & ((n == 2) | (n == 3))) | ((g == 0) & (n == 3)), 1,
                                        np.where(n > 4, 2, 0)))


def test_an_expression_statement_without_effect_is_nothing_with_a_note():
    """`out[i] == x[i]` (a slip for `=`; an HMM code's `success[0]==0`) and `cuda.syncthreads` without its
    parentheses: Numba compiles both to nothing, so the translation has nothing for them, and a note names them.
    Both were the error 'expression statement: has no effect', for code Numba runs."""
    from translator.errors import UserError
    from translator.lower.program import build_program

    src = '''
from numba import cuda

@cuda.jit("void(float32[::1], float32[::1])")
def copy(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] == x[i]
        cuda.syncthreads
        out[i] = 2 * x[i]
'''
    program = build_program(parse_source(src, "slip.py"), Options())
    notes = [n.render_note() for n in program.notices]
    assert sum("expression statement: has no effect: Numba compiles it to nothing" in n for n in notes) == 2
    assert any(n.startswith("slip.py:8:9:") for n in notes) and any(n.startswith("slip.py:9:9:") for n in notes)
    cu = translate_source(src, "slip.py")
    body = cu.split("void copy(")[1].split("\n}\n")[0]
    assert "out[i] = 2.0 * x[i];" in body and "==" not in body and "__syncthreads" not in body
    with pytest.raises(UserError, match="unknown name 'y'"):  # what it reads must still exist
        translate_source(src.replace("out[i] == x[i]", "out[i] == y[i]"), "slip.py")


@pytest.mark.needs("g++")
def test_a_tuple_of_arrays_kernel_parameter_is_an_array_per_item():
    """`pair=UniTuple(float64[:, :], 2)` (datashader's combine kernels), `Tuple((float64[:], int64, float64[:, :]))`
    (a neutron ray tracer's buffers): Numba passes a tuple of arrays to a kernel. --types refused them ('a tuple
    type here holds one or more numbers'); C takes each item as a parameter of its own, as for a device function.
    Python's launchers (built modules, verify, the CPU runtime) pass no tuples of arrays: they say so."""
    from translator.errors import UserError
    from translator.ir.typesys import TypeStringError, parse_return_type
    from translator.runtime import cpurun
    from translator.runtime.cpu_launch import load_cpu

    src = '''
from numba import cuda

@cuda.jit
def gather(src, out):
    values, count, weights = src
    i = cuda.grid(1)
    if i < count:
        out[i] = values[i] * weights[i, 1] + src[2][i, 0] + len(src)
'''
    options = Options(types=parse_types_option("src=Tuple((float64[:], int64, float64[:, :])), out=float64[::1]"))
    cu = translate_source(src, "gather.py", options)
    assert "void gather(const double *src_0, int64_t src_1, const double *src_2, int64_t src_2_shape1, " \
           "double *out)" in cu
    lib = cpurun.compile_cpu(cu, name="tuple_of_arrays")
    values, weights, out = np.arange(6.0), np.arange(12.0).reshape(6, 2) / 4, np.full(6, -1.0)
    i64 = cpurun.ctypes.c_int64
    cpurun.launch(lib, "gather", 1, 8, 0, values, 6, 4, weights, 6, 2, out, 6,
                  argtypes=[None, i64, i64, None, i64, i64, None, i64])
    np.testing.assert_array_equal(out, [v * weights[k, 1] + weights[k, 0] + 3 if k < 4 else -1.0
                                        for k, v in enumerate(values)])
    with pytest.raises(UserError, match="takes 'src', a tuple of arrays"):
        load_cpu(source=src, options=options)
    with pytest.raises(TypeStringError, match="functions cannot return arrays"):
        parse_return_type("UniTuple(float64[:], 2)")  # a result stays numbers


@pytest.mark.needs("g++")
def test_a_loop_counter_rebound_in_its_body_keeps_the_loop_counting():
    """`for i in range(rows): i += y_offset` (an image filter's convolution): Python binds another i for the rest
    of the body and the loop goes on counting. The body's variable took the counter's C name and nvcc rejected
    the redeclaration (internal error, exit 70); an assignment to the counter would also have changed the count."""
    from translator.runtime.cpu_launch import load_cpu

    module = load_cpu(source='''
from numba import cuda

@cuda.jit("void(float32[::1], int64)")
def shifted(out, offset):
    for i in range(4):
        i += offset
        out[i] = i
''')
    out = np.zeros(8, dtype=np.float32)
    module.shifted[1, 1](out, 2)
    assert out.tolist() == [0, 0, 2, 3, 4, 5, 0, 0]
    assert "for (int64_t i = 0; i < 4; ++i) {" in module.cu and "int64_t i_ = i + offset;" in module.cu


@pytest.mark.needs("g++")
def test_a_loop_unpacking_a_tuple_of_pairs_and_an_ellipsis_statement():
    """`for dx, dy in ((0, 1), (0, -1), (1, 0), (-1, 0))` (a lattice Monte Carlo's neighbours) was 'for loop
    target: only a single name can be the loop variable'; Numba iterates the tuple of equal tuples by index and
    unpacks each. `...` written for `pass` (its `else: ...  # Accept move`) was 'Ellipsis: not supported'."""
    from translator.errors import UserError
    from translator.runtime.cpu_launch import load_cpu

    module = load_cpu(Path(__file__).parent / "verify_fixtures" / "real_world_constructs_3.py")
    grid = np.arange(20.0).reshape(4, 5)
    out = np.zeros_like(grid)
    module.neighbours[1, (4, 5)](grid, out)  # real_world_constructs_3.neighbours: both loops and the `...`
    pairs = ((0, 1), (0, -1), (1, 0), (-1, 0))
    np.testing.assert_array_equal(out, sum(np.roll(grid, (-dx, -dy), axis=(0, 1)) for dx, dy in pairs) + 2.0)
    with pytest.raises(UserError, match="every item must be a tuple of 2 numbers"):
        translate_source('''
from numba import cuda

@cuda.jit("void(int32[::1])")
def k(out):
    for a, b in ((1, 2), (3, 4, 5)):
        out[a] = b
''')


@pytest.mark.needs("g++")
def test_device_functions_returning_the_arrays_they_were_given():
    """An MRI simulator's helpers fill output arrays and return them (`return afp, bfp`, `return a`), and its
    kernels rebind a local array to what a helper returns (`m = scaled(m, pd)`, in a loop). Both were errors:
    'array used as a value' at the tuple return, and "'m' assigned more than once" at the local array. The kernel
    is real_world_constructs_3.bloch (verified against Numba there); here its translation runs against the
    values Python computes."""
    from translator.runtime.cpu_launch import load_cpu

    module = load_cpu(Path(__file__).parent / "verify_fixtures" / "real_world_constructs_3.py")
    m0, pd, out = np.linspace(-1.0, 2.0, 5), 0.5, np.zeros((5, 3))
    module.bloch[1, 32](out, m0, pd)
    t = m0 * 0.25  # three rounds of scaling, then the last precess(afp, bfp, t) read through its tuple
    expected = [[(m0[k] + i) * pd ** 3 + t[k] * i * (1.0 - t[k]) + (1.0 - t[k]) for i in range(3)] for k in range(5)]
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    assert "void precess(" in module.cu and "m = scaled" not in module.cu and "return;" in module.cu


@pytest.mark.needs("g++")
def test_a_device_array_of_the_module_is_a_parameter_after_the_kernels_own():
    """numba-cuda's globals example: `PRICES = cuda.to_device(...)` read by a kernel is captured by pointer, and a
    later copy_to_device shows in the next launch. It was an error ('is a device array ... pass it as an
    argument'); the launcher now takes it after the kernel's own arguments, and Python's launchers say why they
    cannot pass it."""
    from translator.errors import UserError
    from translator.runtime import cpurun
    from translator.runtime.cpu_launch import load_cpu

    src = '''
import numpy as np
from numba import cuda

PRICES = cuda.to_device(np.array([10.0, 25.0, 5.0], dtype=np.float32))

@cuda.jit
def totals(quantities, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = quantities[i] * PRICES[i]
'''
    options = Options(types=parse_types_option("quantities=float32[::1], out=float32[::1]"))
    cu = translate_source(src, "prices.py", options)
    assert "void totals(const float *quantities, float *out, int64_t out_shape0, const float *PRICES)" in cu
    lib = cpurun.compile_cpu(cu, name="captured_prices")
    prices, out = np.array([10.0, 25.0, 5.0], dtype=np.float32), np.zeros(3, dtype=np.float32)
    i64 = cpurun.ctypes.c_int64
    for scale in (1, 2):  # the array's contents when the kernel runs, as after PRICES.copy_to_device(...)
        cpurun.launch(lib, "totals", 1, 32, 0, np.full(3, 2.0, np.float32), 3, out, 3, prices * scale, 3,
                      argtypes=[None, i64, None, i64, None, i64])
        assert out.tolist() == (2 * scale * prices).tolist()
    with pytest.raises(UserError, match="reads PRICES, a device array of the module that Numba captures by pointer"):
        load_cpu(source=src, options=options)


@pytest.mark.needs("g++")
def test_a_device_array_a_device_function_reads_is_passed_down_from_the_kernel():
    """numba-cuda's test_device_array_capture reads the captured array in a device function the kernel calls; that
    was 'is a device array ... pass it to the kernel as an argument'. The kernel takes it after its own arguments
    and passes it down each call that leads to the read; what it holds when the kernel runs is what it reads."""
    from translator.runtime import cpurun

    src = '''
import numpy as np
from numba import cuda

SCALE = cuda.to_device(np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32))

@cuda.jit(device=True)
def scaled(i):
    return SCALE[i] * 2.0

@cuda.jit(device=True)
def twice_scaled(i):
    return scaled(i) + scaled(i)

@cuda.jit
def k(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = twice_scaled(i) + SCALE[0]
'''
    cu = translate_source(src, "scale.py", Options(types=parse_types_option("out=float32[::1]")))
    assert "double twice_scaled(int64_t i, const float *SCALE, int64_t SCALE_shape0)" in cu
    lib = cpurun.compile_cpu(cu, name="captured_scale")
    i64 = cpurun.ctypes.c_int64
    for scale in (1, 3):
        out, table = np.zeros(4, np.float32), np.array([1.0, 2.0, 3.0, 4.0], np.float32) * scale
        cpurun.launch(lib, "k", 1, 32, 0, out, 4, table, 4, argtypes=[None, i64, None, i64])
        assert out.tolist() == (4 * table + table[0]).tolist()


@pytest.mark.needs("g++")
def test_the_operator_modules_functions_are_the_operators_they_name():
    # numba-cuda's operator tests hand `operator.add` to a kernel factory; Numba types each as its operator
    src = HEAD + '''
import operator
from operator import truediv

@cuda.jit("void(int64[::1], int64[::1], float64[::1], int64[::1])")
def k(a, b, q, out):
    i = cuda.grid(1)
    if i < a.size:
        q[i] = truediv(a[i], b[i])
        out[i] = operator.floordiv(a[i], b[i]) + operator.mod(a[i], b[i]) * 100 + operator.lt(a[i], b[i]) * 1000
        out[i] = operator.neg(out[i]) if operator.ne(a[i], 0) else out[i]
'''
    module = load_cpu(source=src)
    a = np.array([7, -7, 3, 0], np.int64)
    b = np.array([2, 2, -4, 5], np.int64)
    q, out = np.zeros(4), np.zeros(4, np.int64)
    module.k[1, 4](a, b, q, out)
    expected = a // b + (a % b) * 100 + (a < b) * 1000
    assert np.array_equal(q, a / b)
    assert np.array_equal(out, np.where(a != 0, -expected, expected))


@pytest.mark.needs("g++")
def test_a_complex128_argument_to_a_complex64_signature_is_converted_as_numba_converts_it():
    # numba-cuda's complex tests compile a use case with `cuda.jit(complex64(complex64), device=True)` and call it
    # from a complex128 kernel: Numba converts the argument; C++ needs the conversion spelled (it did not compile)
    src = HEAD + '''
from numba import complex64

def conj(z):
    return z.conjugate()

dev = cuda.jit(complex64(complex64), device=True)(conj)

@cuda.jit("void(complex128[::1], complex128[::1])")
def k(out, a):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = dev(a[i])
'''
    module = load_cpu(source=src)
    assert "dev(n2c::complex64(a[i]))" in module.cu
    a = np.array([1 / 3 + 2j / 3, -1e-9 + 1e40j], np.complex128)
    out = np.zeros(2, np.complex128)
    module.k[1, 2](out, a)
    assert np.array_equal(out, np.conj(a.astype(np.complex64)).astype(np.complex128))


@pytest.mark.needs("g++")
def test_an_atomics_float_index_is_converted_as_numba_converts_it():
    # numba-cuda's atomic tests index a shared array with (tx, uint64(ty) % 8), whose branch-merged type is
    # float64: Numba's atomics convert indices to intp (its getitem does not); the error pointed at line 1
    src = HEAD + '''
from numba import uint64

@cuda.jit("void(int32[:, ::1], float64[::1], boolean)")
def k(ary, where, wrap):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    sm = cuda.shared.array((4, 8), int32)
    sm[tx, ty] = ary[tx, ty]
    cuda.syncthreads()
    bin = (tx, uint64(ty))
    if wrap:
        bin = (bin[0] % 4, bin[1] % 8)
    cuda.atomic.sub(sm, bin, 1)
    cuda.atomic.add(where, where[0] + 0.75, 1.0)
    cuda.syncthreads()
    ary[tx, ty] = sm[tx, ty]
'''
    module = load_cpu(source=src)
    ary = np.arange(32, dtype=np.int32).reshape(4, 8)
    where = np.zeros(4)
    where[0] = 2.0
    module.k[1, (4, 8)](ary, where, True)
    assert np.array_equal(ary, np.arange(32, dtype=np.int32).reshape(4, 8) - 1)
    assert list(where) == [2.0, 0.0, 32.0, 0.0]  # index 2.75 truncates to 2, as intp conversion does


@pytest.mark.needs("g++")
def test_a_float_range_bound_is_truncated_as_numba_converts_it():
    # `for i in range(array.size / 2)` (an odd-even sort): Numba converts float bounds to int64; it was an error
    src = HEAD + '''
@cuda.jit("void(float64[::1], int64[::1])")
def k(bounds, out):
    s = 0
    for i in range(bounds[0], bounds[1], bounds[2]):
        s = s * 10 + i
    out[0] = s
    n = 0
    for j in range(out.size / 2):
        n += 1
    out[1] = n
'''
    module = load_cpu(source=src)
    for bounds, expected in [((1.9, 9.99, 2.5), 1357), ((-2.5, 3.0, 1.0), -20988), ((0, -7.9, -2.9), -246)]:
        out = np.zeros(5, np.int64)
        module.k[1, 1](np.array(bounds), out)
        assert list(out[:2]) == [expected, 2]  # Numba's own results for these bounds (njit), and range(2.5)


def test_a_loop_unpacks_each_row_of_a_2d_array_or_window():
    """A genetic algorithm's constraint check loops `for i, j in array:` over a window of a 3-D array's rows
    (`array_[ind, :, :2]`): each row unpacked, as Numba iterates and unpacks it. It was "for loop target: only a
    single name can be the loop variable"."""
    from translator.runtime.cpu_launch import load_cpu

    module = load_cpu(source='''
from numba import cuda

@cuda.jit(device=True)
def inside(points):
    for x, y in points:
        if not (50 < x < 3950 and 50 < y < 3950):
            return False
    return True

@cuda.jit("void(float64[:, :, ::1], boolean[::1], float64[::1])")
def check(layouts, ok, total):
    k = cuda.grid(1)
    if k < layouts.shape[0]:
        ok[k] = inside(layouts[k, :, :2])
        s = 0.0
        for a, b, c in layouts[k]:
            s += a * 100 + b * 10 + c
        total[k] = s
''')
    assert "double x = points[x_index * points_pitch1];" in module.cu
    layouts = np.random.default_rng(3).uniform(0, 4000, (40, 6, 3))
    layouts[::3, :, :2] = np.clip(layouts[::3, :, :2], 60, 3900)
    ok, total = np.zeros(40, np.bool_), np.zeros(40)
    module.check[2, 32](layouts, ok, total)
    assert ok.tolist() == [bool(((50 < l[:, :2]) & (l[:, :2] < 3950)).all()) for l in layouts]
    assert any(ok) and not all(ok)
    expected = [sum(a * 100 + b * 10 + c for a, b, c in l) for l in layouts]
    assert total.tolist() == expected


def test_a_device_function_gives_back_the_arrays_it_was_given_with_a_number():
    """A SHA-3 implementation threads its sponge through device functions: `state, buf, buf_idx = _absorb(state,
    rate, data, buf, buf_idx)`, and `_pad` returns `_permute(state, buf, buf_idx)`. The arrays are the caller's own;
    C returns the number only. It was "'state' assigned more than once: array names must be assigned exactly
    once". The kernel is real_world_constructs_5.sponge (verified against Numba there); here it runs against
    Python's values."""
    fixture = Path(__file__).parent / "verify_fixtures" / "real_world_constructs_5.py"
    module = load_cpu(fixture)
    assert "n = feed(&state[0], 4, data + t * data_shape1, data_shape1, &buf[0], 4, n);" in module.cu
    assert "return churn(state, state_shape0, buf, buf_shape0, n);" in module.cu
    data = np.random.default_rng(2).integers(0, 256, (40, 11)).astype(np.uint8)
    out, pending = np.zeros((40, 4), np.uint64), np.zeros(40, np.int64)
    module.sponge[2, 32](data, out, pending)
    wrap = (1 << 64) - 1

    def churn(state, buf):
        return [((s * 1099511628211 + b) & wrap) ^ (s >> 7) for s, b in zip(state, buf)], [0] * 4

    for t in range(40):
        state, buf, n = [t + i for i in range(4)], [0] * 4, 0
        for byte in data[t]:
            buf[n] ^= int(byte)
            n += 1
            if n == 4:
                (state, buf), n = churn(state, buf), 0
        assert pending[t] == n
        buf[n] ^= 0x80
        state, _ = churn(state, buf)
        assert out[t].tolist() == state
    with pytest.raises(Exception, match="'s' holding arrays and numbers: the device function returns arrays it "
                                        "was given with numbers"):
        translate_source(fixture.read_text().replace("        state, buf, n = close(state, buf, n)\n",
                                                     "        s = close(state, buf, n)\n"))


def test_a_local_set_to_none_is_numbas_optional_number():
    """A Vincenty solver sets its locals to None before the loop that assigns them numbers, and a search keeps
    `best = None` until it finds one: Numba's Optional(float64). It was "None: kernels have no None value". `is
    None` reads a flag kept beside the number (real_world_constructs_5.search, verified against Numba there, runs
    here against Python's values); a kernel's statement that reads it while None stops the thread, as Numba's
    exception does."""
    module = load_cpu(Path(__file__).parent / "verify_fixtures" / "real_world_constructs_5.py")
    assert "bool best_is_some = false;" in module.cu and "if (!best_is_some) {" in module.cu
    x = np.random.default_rng(4).uniform(-1, 1, 40)
    best_of, solved = np.zeros(40), np.zeros(40)
    module.search[2, 32](x, best_of, solved)
    for i in range(40):
        found = [v for v in x[:i] if v > 0.5]
        assert best_of[i] == (found[-1] if found else -1.0)
        assert solved[i] == math.sin(x[i] + 2) + (x[i] * 2.0 + 1)
    stops = load_cpu(source='''
from numba import cuda

@cuda.jit("void(float64[::1])")
def halve_positive(v):
    i = cuda.grid(1)
    if i < v.size:
        h = None
        if v[i] > 0:
            h = v[i] / 2
        v[i] = h
''')
    assert "if (!h_is_some) {\n            return;\n        }\n        v[i] = h;" in stops.cu
    v = np.array([4.0, -2.0, 1.0, 0.0])
    stops.halve_positive[1, 32](v)
    assert v.tolist() == [2.0, -2.0, 0.5, 0.0]  # where h is None the thread stopped before the store


@pytest.mark.needs("g++")
def test_min_and_max_of_one_array_or_tuple_are_numbas_iterable_min_and_max():
    """gamdpy's `min_box_dim = min(sim_box)`: numba-cuda's iterable_min over a 1-D array (a row, a column too),
    and min of a tuple's items. Before, "min(): takes two or more numbers"."""
    src = HEAD + '''
@cuda.jit("void(float32[::1], float64[:, ::1], float64[::1])")
def k(box, m, out):
    i = cuda.grid(1)
    if i < out.size:
        t = (m[i, 0], m[i, 1], 3.0)
        out[i] = min(box) + max(m[i]) * 10.0 + min(t) * 100.0 + max(m[:, 1]) * 1000.0
'''
    module = load_cpu(source=src)
    assert "n2c::array_min(box, box_shape0)" in module.cu and "n2c::array_max(m + 1, m_shape0, m_shape1)" in module.cu
    rng = np.random.default_rng(2)
    box = rng.uniform(1.0, 2.0, 3).astype(np.float32)
    box[1] = np.nan  # after the first: passed over, as Python's min passes it
    m = rng.uniform(-1.0, 1.0, (5, 2))
    out = np.zeros(5)
    module.k[1, 32](box, m, out)
    want = [float(min(box)) + max(m[i]) * 10.0 + min(m[i, 0], m[i, 1], 3.0) * 100.0 + max(m[:, 1]) * 1000.0
            for i in range(5)]
    assert np.array_equal(out, np.array(want))


@pytest.mark.needs("g++")
def test_enumerate_of_a_constant_tuple_is_indexed_as_a_tuple_loop():
    """numba-cuda's test_lang.test_enumerate: `for i, v in enumerate(tup)` over a tuple of constants. Before,
    "enumerate() of this iterable: only 1-D arrays and their views are iterated here"."""
    src = HEAD + '''
TUP = (1.0, 2.5, 3.0)

@cuda.jit("void(float64[:])")
def foo(a):
    for i, v in enumerate(TUP):
        a[i] = v * (i + 1)
'''
    module = load_cpu(source=src)
    a = np.zeros(3)
    module.foo[1, 1](a)
    assert np.array_equal(a, [1.0, 5.0, 9.0])


@pytest.mark.needs("g++")
def test_a_loop_over_a_list_literal_iterates_its_items_as_numba_cuda_does():
    """A ray tracer's `for P in [P_left, P_right, ...]`: numba-cuda compiles a loop over a list literal (its items
    unified to one type, no list built: measured with compile_ptx for sm_90). It was refused as something
    "Numba's CUDA target refuses too"."""
    src = HEAD + '''
@cuda.jit("void(float64[::1])")
def k(a):
    s = 0.0
    for v in [1.0, 2.5, a[0]]:
        s += v
    for p, q in [(1.0, 2.0), (a[0], 3.0)]:
        s += p * q
    for w in [1, 2.5]:
        s += w
    a[1] = s
'''
    module = load_cpu(source=src)
    a = np.array([4.0, 0.0])
    module.k[1, 1](a)
    assert a[1] == (1.0 + 2.5 + 4.0) + (1.0 * 2.0 + 4.0 * 3.0) + (1 + 2.5)


@pytest.mark.needs("g++")
def test_literal_unroll_runs_the_body_once_per_array_of_a_tuple():
    """`for arr in literal_unroll((a, b))` over arrays of two types (numba-cuda's reduction tests unroll tuples of
    arrays so): the body once per item, `continue` going on to the next (it was 'does not unroll a loop')."""
    src = HEAD + '''
from numba import literal_unroll

@cuda.jit("void(float64[::1], int32[::1], float64[::1])")
def total(a, b, out):
    s = 0.0
    k = 0
    for arr in literal_unroll((a, b)):
        k += 1
        if arr[0] < 0:
            continue
        s += arr[0] * k + arr.size
    out[0] = s
'''
    module = load_cpu(source=src)
    assert "for (int64_t arr_copy = 0; arr_copy < 1; ++arr_copy)" in module.cu
    out = np.zeros(1)
    module.total[1, 1](np.array([1.5, 2.0]), np.array([3, 4, 5], np.int32), out)
    assert out[0] == 1.5 * 1 + 2 + 3 * 2 + 3
    module.total[1, 1](np.array([-1.5, 2.0]), np.array([3, 4, 5], np.int32), out)
    assert out[0] == 3 * 2 + 3


@pytest.mark.needs("g++")
def test_a_device_function_with_a_signature_calls_itself():
    """numba-cuda's recursion tests: `@cuda.jit("i8(i8)", device=True) def fib1(n)` returns fib1(n - 1) +
    fib1(n - 2); C calls the function by its own name (it was 'CUDA C device functions here cannot recurse')."""
    src = HEAD + '''
@cuda.jit("i8(i8)", device=True)
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)

@cuda.jit("void(int64[::1])")
def k(r):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = fib(i)
'''
    module = load_cpu(source=src)
    assert "return fib(n - 1) + fib(n - 2);" in module.cu
    r = np.zeros(12, np.int64)
    module.k[1, 16](r)
    assert r.tolist() == [0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89]


@pytest.mark.needs("g++")
def test_enumerate_of_a_2d_array_unpacks_each_row():
    """A cellular automaton's `for nidx, (nrow, ncol) in enumerate(neighborhood)`: the counter and each row's
    items (it was 'for loop target: only a name can take each element')."""
    src = HEAD + '''
@cuda.jit("void(int32[:, ::1], int64[::1], int64[::1])")
def k(nb, shifts, out):
    i = cuda.grid(1)
    if i < out.size:
        acc = 0
        for n, (dr, dc) in enumerate(nb):
            acc += (dr * 3 + dc) << shifts[n]
        out[i] = acc + i
'''
    module = load_cpu(source=src)
    nb = np.array([[1, 0], [0, 2], [2, 1]], np.int32)
    shifts, out = np.array([0, 4, 8]), np.zeros(5, np.int64)
    module.k[1, 8](nb, shifts, out)
    want = sum((int(r) * 3 + int(c)) << int(s) for (r, c), s in zip(nb, shifts))
    assert out.tolist() == [want + i for i in range(5)]


@pytest.mark.needs("g++")
def test_a_namedtuple_parameter_reads_its_fields_by_name(tmp_path):
    """numba-cuda's test_namedtuple: `f[1, 1](r1, r2, Point(1, 2, 2.236))` and `x.r` in the kernel. The import
    mode types it from that launch as NamedTuple(x=int64, y=int64, r=float64), a spelling --types takes too (it
    was 'attribute .x: only arrays ... have attributes')."""
    from collections import namedtuple

    from translator.frontend.module import parse_file

    src = HEAD + '''
@cuda.jit
def f(r1, r2, x):
    r1[0] = x.x
    r1[1] = x.y
    r2[0] = x.r
'''
    types = parse_types_option("r1=int64[::1], r2=float64[::1], x=NamedTuple(x=int64, y=int64, r=float64)")
    module = load_cpu(source=src, options=Options(types=types))
    Point = namedtuple("Point", ("x", "y", "r"))
    r1, r2 = np.zeros(2, np.int64), np.zeros(1)
    module.f[1, 1](r1, r2, Point(1, 2, 2.236))
    assert r1.tolist() == [1, 2] and r2.tolist() == [2.236]
    path = tmp_path / "points.py"
    path.write_text(textwrap.dedent('''
        from collections import namedtuple

        import numpy as np
        from numba import cuda


        def test_points():
            @cuda.jit
            def f(r1, r2, x):
                r1[0] = x.x
                r2[0] = x.r

            Point = namedtuple("Point", ("x", "y", "r"))
            f[1, 1](np.zeros(2, np.int64), np.zeros(1), Point(1, 2, 2.236))
    '''))
    from translator.lower.program import build_program

    prog = build_program(parse_file(str(path), "sim"), Options())
    assert [str(p.type) for p in prog.kernels[0].python_params][2] == "NamedTuple(x=int64, y=int64, r=float64)"


@pytest.mark.needs("g++")
def test_reductions_of_a_0d_and_a_2d_array_and_of_a_column_major_one():
    """np.sum of a 0-d array is its element and of a C-contiguous 2-D array its elements in C order; a
    column-major one is a located error (np.nditer's order is not what numba2cuda reads there), whose hint
    names the reduction (it printed `np.{name}`)."""
    from translator.errors import UserError

    src = HEAD + '''
@cuda.jit("void(float64[()], int32[:, ::1], float64[::1])")
def k(z, m, out):
    out[0] = np.sum(z) + m.sum()
'''
    module = load_cpu(source=src)
    out = np.zeros(1)
    module.k[1, 1](np.array(2.5), np.arange(6, dtype=np.int32).reshape(2, 3), out)
    assert out[0] == 2.5 + 15
    with pytest.raises(UserError, match=r"(?s)np.sum\(\) of a 2-D strided or column-major array.*hint: reduce each "
                                        r"row: np.sum\(a\[i\]\)"):
        translate_source(src.replace("int32[:, ::1]", "int32[::1, :]"), "k.py")


NRT_EXTREMES = HEAD + '''
from numba import config

config.CUDA_ENABLE_NRT = True


@cuda.jit("void(float32[:, ::1], int64[:, ::1], float32[:, ::1], int64[:, ::1])")
def extremes(m, k, out, kout):
    i = cuda.grid(1)
    if i < m.shape[0]:
        row = m[i]
        out[i, 0] = np.min(row)
        out[i, 1] = row.max()
        out[i, 2] = np.nanmin(row)
        out[i, 3] = np.nanmax(row)
        kout[i, 0] = np.amin(k[i])
        kout[i, 1] = k[i].max()
'''


@pytest.mark.needs("g++")
def test_min_and_max_of_an_array_where_the_module_turns_numbas_runtime_on():
    """numba-cuda compiles np.min/np.max/np.nanmin/np.nanmax of an array only with NRT on, as its reduction tests
    turn it on (config.CUDA_ENABLE_NRT = True in setUp); they were refused as never compiling. The first NaN is
    np.min's result; np.nanmin passes NaNs over."""
    from translator.errors import UserError

    src = NRT_EXTREMES
    module = load_cpu(source=src)
    m = np.array([[3.0, -1.5, 2.0], [np.nan, 1.0, -4.0], [2.0, np.nan, 7.0], [-0.0, 0.0, -2.0]], np.float32)
    k = np.array([[3, -1, 2], [5, 1, -4], [2, 9, 7], [0, 0, -2]], np.int64)
    out, kout = np.zeros((4, 4), np.float32), np.zeros((4, 2), np.int64)
    module.extremes[1, 4](m, k, out, kout)
    np.testing.assert_array_equal(out, [[np.min(r), np.max(r), np.nanmin(r), np.nanmax(r)] for r in m])
    assert kout.tolist() == [[min(r), max(r)] for r in k.tolist()]
    without = src.replace("config.CUDA_ENABLE_NRT = True", "")
    with pytest.raises(UserError, match=r"np.min\(\) of an array: numba-cuda cannot compile it in a kernel without "
                                        r"its runtime \(NRT\)"):
        translate_source(without, "k.py")
    assert "array_npmin" in translate_source(without + "\nimport os\nos.environ["
                                             "'NUMBA_CUDA_ENABLE_NRT'] = '1'\n", "k.py")


@pytest.mark.gpu
def test_gpu_min_and_max_of_an_array_under_numbas_runtime_match_numba(tmp_path):
    """np.min/np.max/np.nanmin/np.nanmax of rows with NaNs, infinities and signed zeros, numba-cuda with NRT on
    against the translation."""
    source = NRT_EXTREMES
    original, translated = numba_and_translation(tmp_path, "extremes", source)
    rng = np.random.default_rng(5)
    m = rng.choice(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.5, 3.0], np.float32), (64, 7))
    k = rng.integers(-2**62, 2**62, (64, 5))
    results = []
    for run in (original.extremes, translated.extremes):
        out, kout = np.zeros((64, 4), np.float32), np.zeros((64, 2), np.int64)
        run[2, 32](m, k, out, kout)
        results.append((out.view(np.int32), kout))
    assert np.array_equal(results[0][0], results[1][0]) and np.array_equal(results[0][1], results[1][1])


@pytest.mark.needs("g++")
def test_tuple_of_a_tuple_is_that_tuple():
    """numba-cuda's vector-type test loops over `tuple((v1, v2, v3))`: "for loop over tuple: numba2cuda iterates
    ... tuples", and tuple() was "not supported in kernels"."""
    module = load_cpu(source=HEAD + '''
@cuda.jit("void(float64[::1], float64, float64)")
def k(res, a, b):
    j = 0
    for v in tuple((a, b, a)):
        res[j] = v
        j += 1
    t = tuple((a, b))
    res[3] = t[1] + len(tuple((a, b))) + len(tuple())
''')
    res = np.zeros(4)
    module.k[1, 1](res, 1.5, -2.0)
    assert res.tolist() == [1.5, -2.0, 1.5, 0.0]
    with pytest.raises(UserError, match=r"tuple\(\): numba2cuda takes tuple\(\) of a tuple"):
        translate_source(HEAD + '''
@cuda.jit("void(float64[::1])")
def k(res):
    t = tuple(res)
''', "k.py")


PING_PONG = HEAD + '''
@cuda.jit("void(float64[::1], float64[::1], int64)")
def k(a, b, n):
    i = cuda.grid(1)
    src = a
    dst = b
    for it in range(n):
        dst[i] = src[i] + 1.0
        tmp = src
        src = dst
        dst = tmp
    keep = src
    src = b
    keep[i] += 100.0
'''


@pytest.mark.needs("g++")
def test_a_name_bound_to_a_pointer_keeps_the_array_it_got_when_the_pointer_moves():
    """A CFD solver's ping-pong: `tmp = src; src = dst; dst = tmp`. tmp named the pointer src itself, so
    `dst = tmp` read src after it had moved: both names ended on b, exit 0 (found by a real-world collection)."""
    module = load_cpu(source=PING_PONG)
    for n in (1, 2, 3):
        a, b = np.zeros(4), np.zeros(4)
        module.k[1, 4](a, b, n)
        ra, rb = np.zeros(4), np.zeros(4)  # what Python computes, element by element
        bufs, s, d = (ra, rb), 0, 1
        for _ in range(n):
            bufs[d][:] = bufs[s] + 1.0
            s, d = d, s
        bufs[s][:] += 100.0
        assert a.tolist() == ra.tolist() and b.tolist() == rb.tolist(), n


@pytest.mark.gpu
def test_gpu_a_name_bound_to_a_moving_pointer_matches_numba(tmp_path):
    original, translated = numba_and_translation(tmp_path, "ping_pong", PING_PONG)
    for n in (1, 2, 5):
        results = []
        for run in (original.k, translated.k):
            a, b = np.arange(64.0), np.zeros(64)
            run[2, 32](a, b, n)
            results.append((a, b))
        assert np.array_equal(results[0][0], results[1][0]) and np.array_equal(results[0][1], results[1][1]), n


@pytest.mark.needs("g++")
def test_ord_of_a_one_character_literal_is_its_code_point():
    """An orbit propagator tests `method == ord('d')` in a device function; it was "call to ord(): is not supported
    in kernels". Numba's ord gives a uint32."""
    module = load_cpu(source=HEAD + '''
@cuda.jit(device=True)
def is_deep(method):
    return method == ord('d')


@cuda.jit("void(int64[::1], int64[::1])")
def classify(m, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = (1 if is_deep(m[i]) else 0) + ord("a") * 1000
''')
    m = np.array([100, 99, 101, 100], np.int64)
    out = np.zeros(4, np.int64)
    module.classify[1, 4](m, out)
    assert out.tolist() == [97001, 97000, 97000, 97001]


@pytest.mark.needs("g++")
def test_slice_bounds_read_at_run_time_are_normalised_as_python_does():
    """A trading-network model slices CSR rows `L1[L2[i]:L2[i + 1]]`; the bounds were taken as non-negative, so a
    negative one gave a view 13 long instead of 3, read before the array's start (exit 0, nvcc fine)."""
    module = load_cpu(source=HEAD + '''
@cuda.jit("void(int32[::1], int32[::1], int64[::1])")
def k(a, b, out):
    v = a[b[0]:b[1]]
    out[0] = v.shape[0]
    out[1] = v[1]
    out[2] = v[-1]
''')
    a = np.arange(10, dtype=np.int32)
    for b in ([-3, 10], [-100, 2], [2, -4], [3, 7]):
        out = np.full(3, -1, np.int64)
        module.k[1, 1](a, np.array(b, np.int32), out)
        view = a[b[0]:b[1]]
        assert out.tolist() == [len(view), view[1], view[-1]], b
    assert "n2c::slice_bound(" in kernel_text(module.cu, "k")


@pytest.mark.needs("g++")
def test_bit_reversal_shifts_and_nested_array_indices_as_numba_types_them():
    """Three exits 0 that computed something else than Numba (realworld33's FFT kernels, Advent of Code):
    cuda.brev of an int64 is numba-cuda's 32-bit brev (it registers uint32 and uint64, and an int64 resolves to
    uint32: brev.b32 in its PTX), not a 64-bit one; `1 << n` shifts an int64 as Numba does, where C's literal
    is an int; and a record's nested array wraps a negative index as a plain array does."""
    rec = np.dtype([("n", np.int32), ("vals", np.int32, 4)])
    module = load_cpu(source=HEAD + '''
rec = np.dtype([("n", np.int32), ("vals", np.int32, 4)])


@cuda.jit("void(int64[::1], int64, uint64[::1])")
def bits(out, s, u):
    idx = cuda.grid(1)
    if idx == 1:
        out[0] = cuda.brev(idx) >> (32 - s)
        out[1] = 1 << (s + 37)
        out[2] = (1 << (s + 37)) - 1
        u[1] = cuda.brev(u[0])


@cuda.jit
def nested(entries, out):
    i = cuda.grid(1)
    if i < len(entries):
        e = entries[i]
        out[i] = e["vals"][e["n"] - 1]
NUMBA2CUDA_TYPES = {"nested": "entries=rec[::1], out=int64[::1]"}
''')
    out = np.zeros(3, np.int64)
    u = np.array([1, 0], np.uint64)
    module.bits[1, 2](out, 3, u)
    assert out.tolist() == [4, 1 << 40, (1 << 40) - 1]
    assert int(u[1]) == 1 << 63
    entries = np.zeros(3, rec)
    entries["n"] = [0, 1, 4]
    entries["vals"] = np.arange(12).reshape(3, 4)
    got = np.zeros(3, np.int64)
    module.nested[1, 3](entries, got)
    assert got.tolist() == [3, 4, 11]


@pytest.mark.needs("g++")
def test_a_match_statement_is_the_if_chain_python_makes_of_it():
    """A collective-motion engine dispatches on an IntEnum with `match`; it was "match statement: not supported".
    Numba compiles the comparisons CPython's bytecode makes: values, `|`, guards, `case _`."""
    module = load_cpu(source=HEAD + '''
from enum import IntEnum


class Op(IntEnum):
    ADD = 0
    MUL = 1


@cuda.jit("void(int64[::1], float64[::1], float64[::1])")
def apply(ops, x, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        match ops[i]:
            case Op.ADD:
                out[i] = x[i] + 1.0
            case Op.MUL | 7:
                out[i] = x[i] * 2.0
            case 3 if x[i] > 0:
                out[i] = -1.0
            case 4:
                pass
            case _:
                out[i] = 99.0
''')
    ops = np.array([0, 1, 7, 3, 3, 4, 5, -1], np.int64)
    x = np.array([1.0, 2.0, 3.0, 4.0, -4.0, 5.0, 6.0, 7.0])
    out = np.full(8, 0.5)
    module.apply[1, 8](ops, x, out)

    def python(op, v):  # the same match, run by Python
        match op:
            case 0:
                return v + 1.0
            case 1 | 7:
                return v * 2.0
            case 3 if v > 0:
                return -1.0
            case 4:
                return 0.5
            case _:
                return 99.0
    assert out.tolist() == [python(o, v) for o, v in zip(ops.tolist(), x.tolist())]


@pytest.mark.needs("g++")
def test_a_tuple_parameter_typed_without_names_reads_the_namedtuple_the_source_makes():
    """numba-cuda's test_namedtuple launches `f(r1, r2, Point(1, 2, 2.236))`, `Point = namedtuple("Point", ("x", "y",
    "r"))` made beside the kernel. Typed from outside as Tuple((int64, int64, float64)), `x.r` was refused ("its type
    names no fields"); the one namedtuple of that arity holding every field read names them. Two such candidates
    leave it refused."""
    src = '''
from collections import namedtuple

import numpy as np
from numba import cuda


def run():
    @cuda.jit
    def f(r1, r2, x):
        r1[0] = x.x
        r1[1] = x.y
        r2[0] = x.r

    Point = namedtuple("Point", ("x", "y", "r"))
    f[1, 1](np.zeros(2, np.int64), np.zeros(1), Point(1, 2, 2.5))
'''
    options = Options(types=parse_types_option("r1=int64[::1], r2=float64[::1], x=Tuple((int64, int64, float64))"))
    module = load_cpu(source=src, options=options)
    r1, r2 = np.zeros(2, np.int64), np.zeros(1)
    module.f[1, 1](r1, r2, (7, 8, 2.5))
    assert r1.tolist() == [7, 8] and r2.tolist() == [2.5]
    from translator.errors import UserError

    ambiguous = src.replace('    Point = namedtuple', '    Other = namedtuple("Other", "r y x")\n    Point = namedtuple')
    with pytest.raises(UserError, match=r"attribute \.x of a tuple: its type names no fields"):
        translate_source(ambiguous, "nt.py", options)


@pytest.mark.needs("g++")
def test_a_loop_over_its_own_name_starts_where_the_name_was():
    """`i = cuda.grid(1); for i in range(i, n, stride)` (a spectral extraction's Legendre loops): Python evaluates
    the range before it rebinds i. It was `for (int64_t i = i; ...)`, a counter read in its own initialiser; nvcc
    only warns about that."""
    source = HEAD + '''
@cuda.jit("void(float64[::1], int64[::1])")
def fill(out, last):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(i, out.shape[0], stride):
        out[i] = i
    j = cuda.threadIdx.x
    for j in range(j + 1, j + 3):
        last[cuda.threadIdx.x] = j
'''
    import re

    # checked before running: the old C read garbage and could loop for ever
    assert not re.search(r"for \((?:int64_t )?(\w+) = \1[ ;+]", translate_source(source))
    module = load_cpu(source=source)
    out, last = np.full(40, -1.0), np.zeros(8, np.int64)
    module.fill[2, 4](out, last)
    assert out.tolist() == [float(k) for k in range(40)]
    assert last.tolist() == [k + 2 for k in range(4)] + [0] * 4


@pytest.mark.needs("g++")
def test_a_none_result_replaced_by_a_number_is_that_number():
    """`v = maybe_half(x); if v is None: v = -1; r[0] = v`: the number assigned on the None branch did not clear
    the None flag, so the kernel stopped before writing r[0] (exit 0, nvcc fine; Numba writes -1)."""
    module = load_cpu(source=HEAD + '''
@cuda.jit(device=True)
def maybe_half(x):
    if x % 2 == 0:
        return x // 2
    return None


@cuda.jit("void(int64[::1], int64[::1])")
def k(r, x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = maybe_half(x[i])
        if v is None:
            v = -1
        r[i] = v
''')
    x = np.array([3, 4, 7, 10], np.int64)
    r = np.full(4, 77, np.int64)
    module.k[1, 4](r, x)
    assert r.tolist() == [-1, 2, -1, 5]


@pytest.mark.needs("g++")
def test_a_function_jitted_by_a_call_may_define_functions_inside():
    """`body_dev = cuda.jit(device=True)(body)` of a body with its own `def inner` (numba-cuda's make_function
    tests): the decorator's spelling translated, the call's said "the kernel defines this name again below"."""
    module = load_cpu(source=HEAD + '''
def body(x):
    def inner(v):
        return v + 1
    return inner(x) * 2


body_dev = cuda.jit(device=True)(body)


def kernel_body(out):
    def twice(v):
        return 2 * v
    out[0] = twice(body_dev(out[0]))


k = cuda.jit("void(int64[::1])")(kernel_body)
''')
    out = np.array([20], np.int64)
    module.k[1, 1](out)
    assert out.tolist() == [84]


@pytest.mark.needs("g++")
def test_an_overload_returning_one_implementation_is_the_device_function_its_calls_are():
    """numba.extending's `@overload(f)` whose function returns one implementation whatever the types (a lambda, or
    an inner def), and the call spelling `overload(f)(fn)`: calls of f are calls of that implementation. They were
    "a plain Python function ... Numba cannot call it from a kernel either", which was false."""
    module = load_cpu(source=HEAD + '''
from numba.cuda.extending import overload
import numba.extending


def scaled(x):
    pass


@overload(scaled, target="cuda")
def _scaled(x):
    return lambda x: x * 10


def shifted(x, k):
    return x - k


def _shifted(x, k):
    """the same body for every type"""
    def impl(x, k):
        return x + 2 * k
    return impl


numba.extending.overload(shifted)(_shifted)


@cuda.jit("void(int64[::1])")
def k(res):
    i = cuda.grid(1)
    if i < res.shape[0]:
        res[i] = scaled(res[i]) + shifted(res[i], 3)
''')
    res = np.arange(5, dtype=np.int64)
    module.k[1, 5](res)
    assert res.tolist() == [11 * v + 6 for v in range(5)]


@pytest.mark.needs("g++")
def test_a_tuple_of_tuples_parameter_empty_ones_included():
    """`f[1, 1](r, ((), (5, 6), (8, 9, 10)))` (numba-cuda's array-argument tests): a kernel parameter that is a
    tuple of tuples, typed `Tuple((Tuple(()), UniTuple(int64, 2), ...))`; --types refused every tuple inside one."""
    source = HEAD + '''
@cuda.jit
def f(r, x):
    r[0] = len(x)
    r[1] = len(x[0])
    r[2] = len(x[1])
    r[3] = x[1][0] * 10 + x[2][2]
    r[4] = x[2][1]
'''
    options = Options(types=parse_types_option("r=int64[::1], x=Tuple((Tuple(()), UniTuple(int64, 2), "
                                               "UniTuple(int64, 3)))"))
    module = load_cpu(source=source, options=options)
    r = np.zeros(5, np.int64)
    module.f[1, 1](r, ((), (5, 6), (8, 9, 10)))
    assert r.tolist() == [3, 0, 2, 60, 9]


@pytest.mark.needs("g++")
def test_range_bounds_are_read_once_though_the_loop_changes_what_they_read():
    """Python evaluates range(start, stop, step) once. A step whose sign is known only at run time was read again
    each iteration (`i = start + k * step` after the body set `step = 100`), and so was a stop that the loop's own
    counter copy changes (`for q in range(q)` inside a loop that keeps q)."""
    def python(b, c):
        q, t = b[0], 0
        while q > 0:
            q -= 1
            for q in range(q):
                t += 1
        c[0] = t
        s, t = b[1], 0
        for i in range(0, 20, s):
            s = 100
            t += i
        c[1] = t
        a, t = b[2], 0
        for i in range(a, 20, b[1]):
            a = 100
            t += i
        c[2] = t

    source = HEAD + '''
@cuda.jit("void(int64[::1], int64[::1])")
def k(b, c):
    q = b[0]
    t = 0
    while q > 0:
        q -= 1
        for q in range(q):
            t += 1
    c[0] = t
    s = b[1]
    t = 0
    for i in range(0, 20, s):
        s = 100
        t += i
    c[1] = t
    a = b[2]
    t = 0
    for i in range(a, 20, b[1]):
        a = 100
        t += i
    c[2] = t
'''
    module = load_cpu(source=source)
    for b in ([5, 3, 2], [9, -2, 19], [1, 7, -5]):
        got, want = np.zeros(3, np.int64), [0, 0, 0]
        module.k[1, 1](np.array(b, np.int64), got)
        python(list(b), want)
        assert got.tolist() == want, b


@pytest.mark.needs("g++")
def test_a_device_function_that_runs_off_its_end_returns_none():
    """A search whose only `return` is in its loop (a polymer simulator's table lookups): Python returns None when the
    loop ends, and Numba types the result Optional(float64). The C function ran off its end (undefined; nvcc only
    warns). Now it returns None there, and the kernel's thread stops where Numba's cast of that None raises."""
    source = (Path(__file__).parent / "verify_fixtures" / "real_world_constructs_13.py").read_text()
    cu = translate_source(source)
    assert "return {0.0, false};" in cu
    module = load_cpu(source=source)
    xs = np.array([0.05, 0.5, 0.95, 1.5, 2.0])
    table, values = np.linspace(0.1, 1.0, 10), np.arange(1.0, 11.0)
    out, hit = np.full(5, -7.0), np.zeros(5, np.int64)
    module.lookup[1, 5](xs, table, values, out, hit)
    assert out.tolist() == [1.0, 1 / 5, 1 / 10, -7.0, -7.0] and hit.tolist() == [1, 1, 1, 0, 0]


LOOP_MADE = HEAD + '''
SCALES = ((2, "two"), (3, "three"))


def make_all():
    made = []
    for scale, name in SCALES:
        bias = scale * 10

        @cuda.jit("void(int64[::1], int64[::1])")
        def f(r, x):
            for i in range(len(r)):
                r[i] = cuda.ldcg(x, i) * scale + bias
        made.append(f)
    for k in range(3):
        @cuda.jit("void(int64[::1])")
        def g(r):
            r[0] = k
        twice = 2 * k

        @cuda.jit("void(int64[::1])")
        def g2(r):
            r[0] = twice
    for op in (cuda.ldcs, cuda.ldlu):
        @cuda.jit("void(int64[::1], int64[::1])")
        def h(r, x):
            r[0] = op(x, 0)
    return made
'''


@pytest.mark.needs("g++")
def test_a_kernel_defined_in_a_loop_is_one_kernel_per_iteration():
    """numba-cuda's cache-hint tests: `for operator, modifier in load_operators:` then `@cuda.jit def f` calling
    `operator(x, i)`. Each iteration defines a new f, which Numba compiles with that iteration's values; the loop
    variable was "a loop variable" the kernel could not read. Now each iteration is a kernel of its own, named by
    the value it starts with (or its index), and each computes with its own values."""
    source = LOOP_MADE
    module = load_cpu(source=source)
    x = np.arange(4, dtype=np.int64)
    for name, scale in (("f_2", 2), ("f_3", 3)):
        r = np.zeros(4, np.int64)
        getattr(module, name)[1, 1](r, x)
        assert r.tolist() == (x * scale + scale * 10).tolist(), name
    for k in range(3):
        r = np.zeros(1, np.int64)
        getattr(module, f"g_{k}")[1, 1](r)
        assert r.tolist() == [k]
        getattr(module, f"g2_{k}")[1, 1](r)  # a name the loop's body binds from the loop's
        assert r.tolist() == [2 * k]
    cu = translate_source(source, "loops.py")
    assert "__global__ void h_ldcs(" in cu and "__ldcs(&x[0])" in cu and "__ldlu(&x[0])" in cu
    prog = build_program(parse_source(source, "loops.py"), Options())
    assert any("defined in the loop `for scale, name in SCALES` (line 10), so Numba compiles a kernel per "
               "iteration, each with that iteration's values: translated as 2 kernels, f_2, f_3" in d.message
               for d in prog.notices)
    # a sequence changed after it is bound (numba-cuda's `exp_functions += [math.exp2]` under an if, or an
    # .append) is not what its one binding spells: the loop is not unrolled, and its variable stays unknown
    for change in ("    if True:\n        ops += [cuda.ldlu]\n", "    ops.append(cuda.ldlu)\n"):
        changed = HEAD + "\n\ndef make():\n    ops = [cuda.ldcs]\n" + change + (
            "    for op in ops:\n        @cuda.jit(\"void(int64[::1], int64[::1])\")\n        def h(r, x):\n"
            "            r[0] = op(x, 0)\n")
        with pytest.raises(UserError, match=r"call to op\(\): 'op' is a loop variable"):
            translate_source(changed, "changed.py")


def test_a_kernel_defined_in_a_loop_takes_the_signature_its_iteration_names():
    """numba-cuda's debuginfo tests: `@cuda.jit((ty,))` in `for ty in (float32, int64, ...)`. Every iteration's
    kernel took the first iteration's signature (a float where Numba compiles int64): wrong code, exit 0."""
    source = HEAD + """

def make():
    for ty in (float32, int64, int32[::1]):
        @cuda.jit((ty,))
        def fill(a):
            pass
"""
    cu = translate_source(source, "loop_signature.py")
    assert "__global__ void fill_0(float a)" in cu
    assert "__global__ void fill_1(int64_t a)" in cu
    assert "__global__ void fill_2(const int *a)" in cu


@pytest.mark.gpu
def test_gpu_kernels_made_in_a_loop_match_numba(tmp_path):
    """Each iteration's kernel (cache-hinted loads, that iteration's constants) against the kernel Numba made in
    that iteration."""
    original, translated = numba_and_translation(tmp_path, "loops", LOOP_MADE)
    x = np.arange(1000, dtype=np.int64) * 7 - 300
    for numba_kernel, name in zip(original.make_all(), ("f_2", "f_3")):
        want, got = np.zeros_like(x), np.zeros_like(x)
        numba_kernel[1, 1](want, x)
        getattr(translated, name)[1, 1](got, x)
        assert np.array_equal(want, got), name


@pytest.mark.needs("g++")
def test_a_none_constant_as_a_condition_is_false():
    """numba-cuda's test_functioncompiler_locals: `cond = None` in the test, `if cond:` in the kernel. Numba prunes
    the branch (None is falsy); it was "a NoneType constant cannot be used here"."""
    module = load_cpu(source=HEAD + '''
DEBUG = None


@cuda.jit("void(float32[::1])")
def k(a):
    if DEBUG:
        a[0] = 1.0
    else:
        a[1] = 2.0
''')
    a = np.zeros(2, np.float32)
    module.k[1, 1](a)
    assert a.tolist() == [0.0, 2.0]
    cu = translate_source("from numba import cuda, float32\n\n\ndef test():\n    cond = None\n\n"
                          "    @cuda.jit(\"void(float32[::1])\")\n    def f(b):\n"
                          "        s = cuda.shared.array(1, float32)\n"
                          "        if cond:\n            s[0] = b[0]\n", "m.py")
    assert "__shared__ float s[1];" in cu and "s[0] = b[0]" not in cu


@pytest.mark.needs("g++")
def test_an_array_method_added_with_overload_method_is_its_implementation():
    """numba-cuda's test_overload_method_kwargs: `@overload_method(types.Array, "foo")` returning one
    implementation with a keyword default, called `A.foo()`, `A.foo(20)`, `A.foo(a_kwarg=30)` in a kernel made in
    a test. It was "array attribute .foo: only .shape, .size, .ndim, .dtype and .T are supported"."""
    source = HEAD + '''
from numba.cuda import types
from numba.cuda.extending import overload_method


@overload_method(types.Array, "first_plus")
def _first_plus(arr, k=10):
    def impl(arr, k=10):
        return arr[0] + k
    return impl


@cuda.jit(device=True)
def first_plus_method(a, k):
    return 12345


@cuda.jit("void(int64[::1], float64[::1])")
def bar(A, res):
    res[0] = A.first_plus()
    res[1] = A.first_plus(20)
    res[2] = A.first_plus(k=30)
    res[3] = first_plus_method(A, 1)
'''
    module = load_cpu(source=source)
    res = np.zeros(4)
    module.bar[1, 1](np.array([5], np.int64), res)
    # a function of the module named like the C function the method becomes is still its own
    assert res.tolist() == [15.0, 25.0, 35.0, 12345.0]


@pytest.mark.needs("g++")
def test_a_device_functions_signature_gives_its_result_type():
    """`@cuda.jit("int32(int32)", device=True)` returning `a + a` (int64 in Numba's typing): Numba converts the
    result to the signature's int32, so 2**31 - 1 doubles to -2; the C function returned the int64 4294967294
    (and a float32 signature's float64 product, 3e38 * 2 = 6e38 where Numba gives inf)."""
    module = load_cpu(source=HEAD + '''
@cuda.jit("int32(int32)", device=True)
def twice(a):
    return a + a


@cuda.jit("float32(float32)", device=True)
def dbl(a):
    return a * 2


@cuda.jit("void(int64[::1], int32[::1], float64[::1], float32[::1])")
def k(r, x, rf, xf):
    r[0] = twice(x[0])
    rf[0] = dbl(xf[0]) / 3
''')
    r, rf = np.zeros(1, np.int64), np.zeros(1)
    module.k[1, 1](r, np.array([2**31 - 1], np.int32), rf, np.array([3e38], np.float32))
    assert r.tolist() == [-2] and rf.tolist() == [math.inf]
    assert "__device__ int twice(int a)" in module.cu and "__device__ float dbl(float a)" in module.cu
