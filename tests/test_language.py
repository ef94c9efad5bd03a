"""The supported kernel language, construct by construct, run through translation + the CPU runtime."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

pytestmark = pytest.mark.needs("g++")  # most cases run the translation on the CPU runtime (g++)

from translator import translate_source
from translator.runtime.cpu_launch import load_cpu
from translator.lower.program import Options
from translator.ir.typesys import parse_types_option

HEAD = "import math\nimport numpy as np\nfrom numba import cuda, float32, int32, int64, uint32\n"


def run(src, kernel, grid, block, *args, shared=0, options=None):
    module = load_cpu(source=HEAD + src, options=options)
    getattr(module, kernel)[grid, block, 0, shared](*args)
    return module


def test_atomics_every_kind():
    src = '''
@cuda.jit("void(int32[::1], float32[::1], int64[::1], uint32[::1], float64[::1])")
def k(i32, f32, i64, u32, f64):
    t = cuda.threadIdx.x
    cuda.atomic.add(i32, 0, 1)
    cuda.atomic.sub(i32, 1, 2)
    cuda.atomic.max(i32, 2, t)
    cuda.atomic.min(i32, 3, -t)
    cuda.atomic.and_(i32, 4, ~(1 << (t % 8)))
    cuda.atomic.or_(i32, 5, 1 << (t % 8))
    cuda.atomic.xor(i32, 6, 1)
    cuda.atomic.add(f32, 0, 0.5)
    cuda.atomic.max(f32, 1, float32(t) * 0.25)
    cuda.atomic.min(f32, 2, -float32(t))
    cuda.atomic.add(i64, 0, 3000000000)
    cuda.atomic.max(i64, 1, t * 5000000000)
    cuda.atomic.inc(u32, 0, 9)
    cuda.atomic.dec(u32, 1, 9)
    old = cuda.atomic.cas(i64, 2, t, t + 1)
    if t == 0:
        i32[7] = old == 0
    cuda.atomic.exch(u32, 2, 77)
    cuda.atomic.add(f64, 0, 0.25)
    cuda.atomic.nanmax(f64, 1, float(t))
'''
    i32 = np.zeros(8, np.int32)
    i32[4] = -1
    f32 = np.zeros(3, np.float32)
    i64 = np.zeros(3, np.int64)
    u32 = np.zeros(3, np.uint32)
    f64 = np.array([0.0, np.nan], np.float64)
    run(src, "k", 1, 64, i32, f32, i64, u32, f64)
    assert i32.tolist() == [64, -128, 63, -63, -256, 255, 0, 1]
    assert f32.tolist() == [32.0, 63 * 0.25, -63.0]
    assert i64.tolist() == [64 * 3000000000, 63 * 5000000000, 64]
    assert u32.tolist() == [64 % 10, (0 - 64) % 10 if False else 6, 77]
    assert f64[0] == 16.0 and f64[1] == 63.0  # nanmax replaces a NaN in memory


def test_warp_intrinsics():
    src = '''
@cuda.jit("void(int32[::1], int32[::1])")
def k(x, out):
    t = cuda.threadIdx.x
    v = x[t]
    s = v
    off = 16
    while off > 0:
        s += cuda.shfl_xor_sync(0xffffffff, s, off)
        off //= 2
    up = cuda.shfl_up_sync(0xffffffff, v, 1)
    down = cuda.shfl_down_sync(0xffffffff, v, 2)
    first = cuda.shfl_sync(0xffffffff, v, 0)
    ballot = cuda.ballot_sync(0xffffffff, v % 2 == 0)
    everyone = cuda.all_sync(0xffffffff, v >= 0)
    anyone = cuda.any_sync(0xffffffff, v > 60)
    lane = cuda.laneid
    out[t * 8 + 0] = s
    out[t * 8 + 1] = up
    out[t * 8 + 2] = down
    out[t * 8 + 3] = first
    out[t * 8 + 4] = ballot
    out[t * 8 + 5] = everyone
    out[t * 8 + 6] = anyone
    out[t * 8 + 7] = lane + cuda.warpsize
'''
    x = np.arange(64, dtype=np.int32)
    out = np.zeros(64 * 8, np.int32)
    run(src, "k", 1, 64, x, out)
    out = out.reshape(64, 8)
    for t in range(64):
        w = t // 32 * 32
        lane = t % 32
        assert out[t, 0] == x[w:w + 32].sum()
        assert out[t, 1] == (x[t - 1] if lane >= 1 else x[t])
        assert out[t, 2] == (x[t + 2] if lane < 30 else x[t])
        assert out[t, 3] == x[w]
        assert np.uint32(out[t, 4]) == np.uint32(0x55555555)
        assert out[t, 5] == 1 and out[t, 6] == (1 if w == 32 else 0)
        assert out[t, 7] == lane + 32


def test_block_barriers_with_predicates_and_local_and_const_arrays():
    src = '''
WEIGHTS = np.array([1.0, 2.0, 4.0], dtype=np.float32)

@cuda.jit("void(float32[::1], int32[::1])")
def k(out, flags):
    t = cuda.threadIdx.x
    w = cuda.const.array_like(WEIGHTS)
    acc = cuda.local.array(3, float32)
    for i in range(3):
        acc[i] = w[i] * t
    total = float32(0)
    for i in range(3):
        total += acc[i]
    out[t] = total
    n = cuda.syncthreads_count(t % 3 == 0)
    a = cuda.syncthreads_and(t < 100)
    o = cuda.syncthreads_or(t == 5)
    if t == 0:
        flags[0] = n
        flags[1] = a
        flags[2] = o
'''
    out = np.zeros(32, np.float32)
    flags = np.zeros(3, np.int32)
    module = run(src, "k", 1, 32, out, flags)
    assert "__constant__ float WEIGHTS[3] = {1.0f, 2.0f, 4.0f};" in module.cu
    assert out.tolist() == [7.0 * t for t in range(32)]
    assert flags[0] == 11 and flags[1] != 0 and flags[2] != 0


def test_grid_helpers_3d_and_early_return():
    src = '''
@cuda.jit("void(int64[:, :, ::1])")
def k(out):
    x, y, z = cuda.grid(3)
    sx, sy, sz = cuda.gridsize(3)
    if x >= out.shape[2] or y >= out.shape[1] or z >= out.shape[0]:
        return
    out[z, y, x] = x + 10 * y + 100 * z + 1000 * (sx * sy * sz)
'''
    out = np.full((3, 5, 7), -1, np.int64)
    run(src, "k", (2, 2, 3), (4, 3, 1), out)
    z, y, x = np.indices(out.shape)
    assert (out == x + 10 * y + 100 * z + 1000 * (8 * 6 * 3)).all()


def test_device_function_tuples_views_and_swaps():
    src = '''
@cuda.jit(device=True)
def minmax(a, n):
    lo = a[0]
    hi = a[0]
    for i in range(1, n):
        lo = min(lo, a[i])
        hi = max(hi, a[i])
    return lo, hi

@cuda.jit("void(float32[:, ::1], float32[:, ::1])")
def k(x, out):
    r = cuda.grid(1)
    if r < x.shape[0]:
        row = x[r]
        lo, hi = minmax(row, x.shape[1])
        hi, lo = lo, hi
        out[r, 0] = lo
        out[r, 1] = hi
        tail = row[2:]
        out[r, 2] = tail[0] + len(tail)
'''
    x = np.random.default_rng(3).standard_normal((9, 6)).astype(np.float32)
    out = np.zeros((9, 3), np.float32)
    run(src, "k", 1, 16, x, out)
    assert (out[:, 0] == x.max(axis=1)).all() and (out[:, 1] == x.min(axis=1)).all()
    assert np.array_equal(out[:, 2], x[:, 2] + np.float32(4))


def test_print_uses_numba_formats(capfd):
    src = '''
@cuda.jit("void(int32, float32)")
def k(n, x):
    if cuda.threadIdx.x == 0:
        print("n =", n, "x =", x, "big", n * 3000000000, n > 2, "100%")
'''
    run(src, "k", 1, 2, 3, 1.5)
    out = capfd.readouterr().out
    assert "n = 3 x = 1.500000 big 9000000000 True 100%\n" in out


def test_print_with_python2s_trailing_comma_prints(capfd):
    # `print(x),` is a tuple made and dropped, as Numba compiles it; it was "print(): is a statement here"
    src = '''
@cuda.jit("void(int32, float32)")
def k(n, x):
    if cuda.threadIdx.x == 0:
        print("n =", n),
        print(x), print(n + 1)
'''
    run(src, "k", 1, 2, 3, 1.5)
    assert capfd.readouterr().out == "n = 3\n1.500000\n4\n"
    # a tuple of reads alone still has one note, at its own line
    from translator.frontend.module import parse_source
    from translator.lower.program import build_program

    dropped = "from numba import cuda\n\n@cuda.jit(\"void(float64[::1])\")\ndef k(a):\n    a[0], a[1]\n"
    notes = [n.render_note() for n in build_program(parse_source(dropped, "k.py"), Options()).notices]
    assert [n for n in notes if "has no effect" in n] == [n for n in notes if n.startswith("k.py:5:5: note: "
                                                                                            "expression statement")]
    assert len([n for n in notes if "has no effect" in n]) == 1


@pytest.mark.parametrize("imports,cast", [
    ("from numba import cuda\nfrom numba import float32", "float32"),
    ("import numba.cuda as cuda\nfrom numba.cuda import float32", "float32"),
    ("import numba\nfrom numba import cuda", "numba.float32"),
    ("from numba import cuda\nimport numpy as np", "np.float32"),
])
def test_import_spellings(imports, cast):
    src = f'''{imports}
import math
SCALE = (2, 3.5)
OFFSET = SCALE[0] * 4 - 1

@cuda.jit("void(float32[::1])")
def k(a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = {cast}(math.sqrt(a[i]) * SCALE[1] + OFFSET)
'''
    module = load_cpu(source=src)
    a = np.arange(10, dtype=np.float32)
    module.k[1, 32](a)
    assert np.array_equal(a, (np.sqrt(np.arange(10, dtype=np.float32)).astype(np.float64) * 3.5 + 7).astype(np.float32))
    assert "static constexpr int64_t OFFSET = 7;" in module.cu


def test_types_from_annotations_expression_signature_and_option():
    annotated = HEAD + '''
@cuda.jit
def k(a: float32[::1], n: int32):
    i = cuda.grid(1)
    if i < n:
        a[i] = i
'''
    expression = HEAD + '''
from numba import void
@cuda.jit(void(float32[::1], int32))
def k(a, n):
    i = cuda.grid(1)
    if i < n:
        a[i] = i
'''
    untyped = HEAD + '''
@cuda.jit
def k(a, n):
    i = cuda.grid(1)
    if i < n:
        a[i] = i
'''
    texts = [translate_source(annotated), translate_source(expression),
             translate_source(untyped, options=Options(types=parse_types_option("a=float32[::1], n=int32")))]
    kernel = [re.sub(r"  // <string>:\d+", "", t[t.index("__global__"):]) for t in texts]
    assert kernel[0] == kernel[1] == kernel[2]
    assert "__global__ void k(float *a, int n)" in kernel[0]


def test_a_types_spec_error_names_its_parameter():
    """A `--types` error names the parameter it is about; '::1' in the middle of the dimensions is neither order."""
    from translator.ir.typesys import TypeStringError

    with pytest.raises(TypeStringError) as exc:
        parse_types_option("A=float32[:, ::1], B=float32[:, ::1, :]")
    assert str(exc.value).startswith("B: '::1' marks the one dimension whose elements are adjacent: the last (C "
                                     "order, float32[:, :, ::1]) or the first (Fortran order, float32[::1, :, :])")


def test_types_numba_has_but_numba2cuda_does_not_translate_are_said_as_what_they_are():
    """numba.typeof's spelling of an 'S12' array, `[char x 12][:]`, and numba-cuda's own bfloat16 were said to be
    types "a library adds to Numba", which they are not."""
    from translator.ir.typesys import TypeStringError

    for spec, said in (("arr=[char x 12][:]", "Numba's string types, such as UnicodeCharSeq"),
                       ("a=bfloat16[:]", "numba2cuda translates bfloat16 values a kernel makes, numba.cuda.bf16's, "
                                         "but not arrays of them as parameters")):
        with pytest.raises(TypeStringError) as exc:
            parse_types_option(spec)
        assert said in str(exc.value) and "a library adds" not in str(exc.value), str(exc.value)


def test_types_as_numba_typeof_prints_them_are_read():
    """`str(numba.typeof(a))` is what a user copies into --types: `array(float32, 2d, C)` was "a type a library adds
    to Numba", and `Tuple(UniTuple(int64 x 3), int64)` (numba-cuda's test_tuple_of_tuples_and_scalars) "fails in
    Numba"; the import mode wrote a launched nested tuple the same refused way."""
    import numba

    from translator.frontend.probe import type_string

    values = {"a": np.zeros((2, 3), np.float32), "f": np.asfortranarray(np.zeros((2, 3))),
              "s": np.zeros((4, 5))[:, 1], "r": np.zeros(3, np.dtype([("a", np.int32), ("b", np.float32)])),
              "t": ((6, 5, 4), 7), "u": (np.arange(2), 10, (4, 3)), "one": (1.5,), "z": np.zeros(())}
    for name, value in values.items():
        numba_type = numba.typeof(value)
        printed = parse_types_option(f"{name}={numba_type}")[name]
        assert printed == parse_types_option(f"{name}={type_string(numba_type)}")[name], (name, str(numba_type))
        assert str(printed) == str(parse_types_option(f"{name}={type_string(numba_type)}")[name])
    assert str(parse_types_option("t=Tuple(UniTuple(int64 x 3), int64)")["t"]) == \
        str(parse_types_option("t=Tuple((UniTuple(int64, 3), int64))")["t"])
    assert parse_types_option("a=readonly array(float32, 1d, A)")["a"] == parse_types_option("a=float32[:]")["a"]
    from translator.ir.typesys import TypeStringError

    for broken in ("p=Tuple(UniTuple(int64 x 3) int64)", "p=UniTuple(int64 x 3, out=float64[::1]"):
        with pytest.raises(TypeStringError, match="is not one type"):  # was an AttributeError (exit 70)
            parse_types_option(broken)


def test_a_column_major_array_is_indexed_column_major_on_every_runtime(tmp_path, capsys):
    """ncgomez17's coalescing demo launches `cuda.to_device(y.T)`, a pulsar pipeline `np.array(data.T)`: Numba
    compiles a kernel for column-major arrays (`float32[::1, :]`). It was refused ("only C-contiguous or
    any-layout arrays"); now its first index steps by one element, the launch asks for that order, and a view
    of such an array is a located error."""
    from translator.cli import main
    from translator.errors import UserError
    from translator.runtime.cpu_launch import load_cpu

    src = '''
import numpy as np
from numba import cuda

@cuda.jit("void(float32[:, ::1], float32[::1, :], float32[:, ::1], uint8[::1, :, :])")
def mm(A, B, C, T3):
    i, j = cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        s = 0.0
        for k in range(A.shape[1]):
            s += A[i, k] * B[k, j]
        C[i, j] = s + T3[i % T3.shape[0], j % T3.shape[1], 1]
        T3[i % T3.shape[0], j % T3.shape[1], 0] = 7

def example(rng, size="small"):
    A = rng.random((5, 3), dtype=np.float32)
    B = np.asfortranarray(rng.random((3, 4), dtype=np.float32))
    T3 = np.asfortranarray(rng.integers(0, 9, (2, 3, 2)).astype(np.uint8))
    return dict(kernel=mm, griddim=(1, 1), blockdim=(8, 8), shared=0,
                args=[A, B, np.zeros((5, 4), np.float32), T3], expected={2: None, 3: None})
'''
    module = load_cpu(source=src)
    assert "s += A[i * A_shape1 + k] * B[j * B_shape0 + k];" in module.cu
    assert "T3[(T3_shape1 + n2c::wrap(n2c::mod(j, T3_shape1), T3_shape1)) * T3_shape0 + " in module.cu
    rng = np.random.default_rng(0)
    A = rng.random((5, 3), dtype=np.float32)
    Bc = rng.random((3, 4), dtype=np.float32)
    T3 = np.asfortranarray(rng.integers(0, 9, (2, 3, 2)).astype(np.uint8))
    before, C = T3.copy(order="K"), np.zeros((5, 4), np.float32)
    module.mm[(1, 1), (8, 8)](A, np.asfortranarray(Bc), C, T3)
    ref = np.zeros((5, 4), np.float32)
    for i in range(5):
        for j in range(4):  # Numba's order: float32 products summed in float64
            ref[i, j] = sum(float(A[i, k] * Bc[k, j]) for k in range(3)) + float(before[i % 2, j % 3, 1])
    assert np.array_equal(C, ref) and (T3[:, :, 0] == 7).all()
    with pytest.raises(TypeError, match=r"argument 'B' must be array\(float32, 2d, F\), got array\(float32, 2d, A\) "
                                        r"\(a NumPy array, not F-contiguous: numba2cuda indexes it column-major, as its "
                                        r"type says\); pass np.asfortranarray\(B\)"):
        module.mm[(1, 1), (8, 8)](A, Bc, C, T3)
    path = tmp_path / "fortran.py"
    path.write_text(src)
    assert main(["verify", str(path), "--device", "cpu"]) == 0
    assert "verdict: EQUIVALENT" in capsys.readouterr().out
    with pytest.raises(UserError, match="view of the column-major array 'B': numba2cuda indexes a Fortran-order "
                                        "array element by element"):
        translate_source(src.replace("B[k, j]", "B[k][j]"))



def test_kernel_defined_inside_a_function():
    src = HEAD + '''
TILE = 4

def make():
    @cuda.jit("void(int32[::1])")
    def inner(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] = i * TILE
    return inner
'''
    a = np.zeros(8, np.int32)
    load_cpu(source=src).inner[1, 8](a)
    assert a.tolist() == [4 * i for i in range(8)]


def test_dynamic_shared_memory_views():
    src = HEAD + '''
@cuda.jit("void(float32[::1], int32)")
def k(out, n):
    t = cuda.threadIdx.x
    shar = cuda.shared.array(0, dtype=float32)
    first, second = shar[:n], shar[n:2 * n]
    first[t] = t
    second[t] = 2 * t
    cuda.syncthreads()
    out[t] = first[n - 1 - t] + second[-1]
'''
    out = np.zeros(16, np.float32)
    run(src, "k", 1, 16, out, 16, shared=2 * 16 * 4)
    assert out.tolist() == [15 - t + 30 for t in range(16)]


def test_float32_store_of_a_conditional_stays_single_precision():
    src = '''
@cuda.jit("void(float32[::1], float32[::1])")
def k(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] if x[i] > 0 else 0.1
'''
    module = load_cpu(source=HEAD + src)
    assert "x[i] > 0.0f ? x[i] : 0.1f" in module.cu or "? x[i] : 0.1f" in module.cu
    x = np.random.default_rng(5).standard_normal(100).astype(np.float32)
    out = np.zeros(100, np.float32)
    module.k[4, 32](x, out)
    assert np.array_equal(out, np.where(x > 0, x, np.float64(0.1)).astype(np.float32))


def test_guards_prove_indices_non_negative():
    src = HEAD + '''
@cuda.jit("void(float32[::1], int64)")
def k(a, j):
    if j >= -3 and j >= 0 and j < a.shape[0]:
        a[j] = 1
    if j < a.shape[0]:
        a[j] = 2
'''
    text = translate_source(src, options=Options(assume_nonnegative=False))
    body = text[text.index("__global__"):]
    assert "a[j] = 1.0f;" in body  # the guard proves j >= 0: plain C indexing
    assert "a[n2c::wrap(j, a_shape0)] = 2.0f;" in body  # no guard: Numba's wraparound kept


def test_for_over_a_1d_array_loops_over_its_elements():
    """`for v in a` over a 1-D array (views included) is Numba's element loop, as guvectorize kernels write it;
    the loop's own counter never clashes with a name of the kernel. Iterating a 2-D array yields its rows."""
    src = '''
from numba import cuda

@cuda.jit("void(float32[:, ::1], float64[::1])")
def row_sq_norms(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        v_index = 0
        s = 0.0
        for v in a[i]:
            s += v * v
            v_index += 1
        out[i] = s + v_index
'''
    a = np.arange(35, dtype=np.float32).reshape(5, 7) / 3
    out = np.zeros(5)
    load_cpu(source=src).row_sq_norms[1, 32](a, out)
    expected = [sum(float(np.float32(v * v)) for v in row) + 7 for row in a]
    assert out.tolist() == expected
    # over a 2-D array each v is a row, as in Numba: v * v is then array arithmetic, which kernels do not have
    with pytest.raises(Exception, match=r"array used as a value: 'v' is an array here"):
        translate_source(src.replace("in a[i]:", "in a:"))


def test_unpacking_into_array_elements():
    """`ux[i], uy[i] = push(...)` (fbpic's particle push) and swaps through elements: the whole right side
    first, then each target left to right, as Python assigns."""
    src = '''
from numba import cuda

@cuda.jit(device=True)
def rotate(a, b):
    return b, -a

@cuda.jit("void(float64[::1], float64[::1], float64[:, ::1])")
def k(u, v, w):
    i = cuda.grid(1)
    if i < u.size:
        u[i], v[i] = rotate(u[i], v[i])
        w[i, 0], t = u[i], 2.0
        u[i], v[i] = v[i], u[i] + t
'''
    u, v, w = np.arange(5.0), np.arange(5.0) * 10, np.zeros((5, 2))
    load_cpu(source=src).k[1, 32](u, v, w)
    u0, v0 = np.arange(5.0), np.arange(5.0) * 10
    assert w[:, 0].tolist() == v0.tolist()
    assert u.tolist() == (-u0).tolist() and v.tolist() == (v0 + 2).tolist()


def test_a_row_view_rebound_in_two_loops():
    """`x1 = train[j]` in two loops (dpbench's k-NN): one name bound to a view made in place, twice. Its offset
    was never typed and the translator died with an internal error."""
    src = '''
from numba import cuda

@cuda.jit("void(float64[:, ::1], float64[::1])")
def k(a, out):
    i = cuda.grid(1)
    if i < a.shape[1]:
        s = 0.0
        for j in range(2):
            x1 = a[j]
            s += x1[i]
        for j in range(2, 4):
            x1 = a[j]
            s += 10 * x1[i]
        out[i] = s
'''
    a, out = np.arange(20.0).reshape(4, 5), np.zeros(5)
    load_cpu(source=src).k[1, 32](a, out)
    assert out.tolist() == (a[0] + a[1] + 10 * (a[2] + a[3])).tolist()


def test_enumerate_over_an_array_row():
    """`for u, l in enumerate(labels[b])` (speechbrain's transducer loss): the element loop with its counter."""
    src = '''
from numba import cuda

@cuda.jit("void(int32[:, ::1], int64[::1])")
def k(labels, out):
    b = cuda.grid(1)
    if b < labels.shape[0]:
        acc = 0
        for u, l in enumerate(labels[b]):
            acc += (u + 1) * l
        out[b] = acc
'''
    labels, out = np.arange(12, dtype=np.int32).reshape(3, 4), np.zeros(3, np.int64)
    load_cpu(source=src).k[1, 32](labels, out)
    assert out.tolist() == [sum((u + 1) * int(v) for u, v in enumerate(row)) for row in labels]
    with pytest.raises(Exception, match=r"array used as a value: 'l' is an array here"):  # l is a row there
        translate_source(src.replace("enumerate(labels[b])", "enumerate(labels)"))


def test_a_local_annotation_is_ignored_as_numba_ignores_it():
    """Python never evaluates a local's annotation, so Numba does not see it: `acc: float32 = 0.0` is a float64
    accumulator there (a note says so), and `labels: torch.Tensor = mlabels[b]` (NeMo) is a plain row view."""
    src = '''
from numba import cuda, float32

@cuda.jit("void(float32[:, ::1], float64[::1])")
def row_sum(m, out):
    i = cuda.grid(1)
    if i < m.shape[0]:
        acc: float32 = 0.0
        row: "torch.Tensor" = m[i]
        for j in range(m.shape[1]):
            acc += row[j]
        out[i] = acc
'''
    module = load_cpu(source=src)
    assert "double acc = 0.0;" in module.cu
    notes = [f"{d.construct}: {d.message}" for d in module.program.notices]
    assert notes == ["annotation 'float32': ignored, as Numba ignores a local's annotation: the value's own type is "
                     "kept (write acc = float32(...) to choose it)"]
    m, out = (np.arange(12, dtype=np.float32) / 7).reshape(3, 4), np.zeros(3)
    module.row_sum[1, 32](m, out)
    assert out.tolist() == [sum(float(v) for v in row) for row in m]


def test_libdevice_functions_by_name():
    """`s, c = cuda.libdevice.sincosf(x)` (PyLops' Radon transform) and libdevice's other math functions: fixed
    types by name (f: float32), the CUDA math function of the same name in C."""
    src = '''
from numba import cuda
from numba.cuda import libdevice

@cuda.jit("void(float32[::1], float32[::1], float64[::1])")
def k(x, y, z):
    i = cuda.grid(1)
    if i < x.size:
        s, c = libdevice.sincosf(x[i])
        y[i] = s * c + libdevice.rsqrtf(x[i]) + libdevice.powf(x[i], 2.0)
        z[i] = libdevice.exp(z[i]) + cuda.libdevice.fmax(1.0, z[i])
'''
    module = load_cpu(source=src)
    assert "const auto sincosf_ret = n2c::sincosf(x[i]);" in module.cu
    assert "rsqrtf(x[i]) + powf(x[i], 2.0f)" in module.cu and "exp(z[i]) + fmax(1.0, z[i])" in module.cu
    x, y, z = np.linspace(0.5, 3, 7, dtype=np.float32), np.zeros(7, np.float32), np.linspace(-1, 1, 7)
    z0 = z.copy()
    module.k[1, 32](x, y, z)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(y, np.sin(x64) * np.cos(x64) + 1 / np.sqrt(x64) + x64 ** 2, rtol=1e-6)
    np.testing.assert_allclose(z, np.exp(z0) + np.maximum(1.0, z0), rtol=1e-15)


def test_libdevice_frexp_sad_and_math_remainder():
    """numba-cuda's libdevice tests: frexp gives (mantissa, int32 exponent); sad and usad are |x - y| + z of int32s;
    math.remainder is IEEE's (the nearest multiple, ties to even), as Python's."""
    src = '''
import math
from numba import cuda
from numba.cuda import libdevice

@cuda.jit("void(float64[::1], float64[::1], int32[::1], int32[::1], float64[::1])")
def k(x, frac, expo, s, r):
    i = cuda.grid(1)
    if i < x.size:
        f, e = libdevice.frexp(x[i])
        frac[i] = f
        expo[i] = e
        s[i] = libdevice.sad(i, 3, 10) + libdevice.usad(i, 2, 1)
        r[i] = math.remainder(x[i], 2.0)
'''
    module = load_cpu(source=src)
    x = np.array([0.0, 1.0, -3.0, 5.0, 0.3, 1e300, -7.0])
    frac, expo, s, r = np.zeros(7), np.zeros(7, np.int32), np.zeros(7, np.int32), np.zeros(7)
    module.k[1, 32](x, frac, expo, s, r)
    want = [math.frexp(v) for v in x]
    assert frac.tolist() == [m for m, _ in want] and expo.tolist() == [e for _, e in want]
    assert s.tolist() == [abs(i - 3) + 10 + abs(i - 2) + 1 for i in range(7)]
    assert r.tolist() == [math.remainder(v, 2.0) for v in x]


def test_contiguous_multi_dimensional_slices_are_views():
    """`R[0, :]` (a ray tracer), `a[i, 1:3]`, `a[i][1:3]`, `b[1:3, :, :]`: integer indices, one slice, then full
    slices is one contiguous piece, a view at an offset (passed to a device function too), with no step."""
    src = '''
from numba import cuda

@cuda.jit(device=True)
def total(v):
    s = 0.0
    for j in range(v.shape[0]):
        s += v[j]
    return s

@cuda.jit("void(float64[:, ::1], float64[:, :, ::1], float64[:, ::1])")
def k(a, b, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i, 0] = total(a[i, :])
        out[i, 1] = total(a[i, 1:3]) + 10 * total(a[i][1:3])
        out[i, 2] = a[1:, :][0, 2] + b[1:3, :, :][1, 0, 1] + a[i, 1:][0]
        out[i, 3] = total(b[i, 1, :])
'''
    a, b, out = np.arange(12.0).reshape(3, 4), np.arange(24.0).reshape(3, 2, 4), np.zeros((3, 4))
    load_cpu(source=src).k[1, 32](a, b, out)
    for i in range(3):
        assert out[i].tolist() == [a[i, :].sum(), 11 * a[i, 1:3].sum(), a[1, 2] + b[2, 0, 1] + a[i, 1],
                                   b[i, 1, :].sum()]


def test_a_tuple_variable_holds_the_values_it_was_made_of():
    """`pair = (x[i], x[i + 1])` then writes to x (a swap), `ind = (r, j)` kept as an atomic's index while j
    changes (PyLops' Kirchhoff): each item is copied where the tuple is made, as a Python tuple holds values."""
    src = '''
from numba import cuda

@cuda.jit("void(float32[::1], float64[:, ::1])")
def k(x, y):
    i = 2 * cuda.grid(1)
    if i + 1 < x.shape[0]:
        pair = (x[i], (x[i + 1], i))
        x[i] = pair[1][0]
        x[i + 1] = pair[0]
        j = i % 3
        ind = (i % y.shape[0], j)
        j = 0
        cuda.atomic.add(y, ind, pair[1][1] + j)
'''
    x, y = np.arange(8, dtype=np.float32), np.zeros((3, 3))
    load_cpu(source=src).k[1, 32](x, y)
    assert x.tolist() == [1, 0, 3, 2, 5, 4, 7, 6]
    expected = np.zeros((3, 3))
    for i in range(0, 8, 2):
        expected[i % 3, i % 3] += i
    assert y.tolist() == expected.tolist()


def test_selp_selects_between_two_values():
    src = '''
from numba import cuda

@cuda.jit("void(int64[::1], int64, int64[::1])")
def k(a, b, c):
    i = cuda.grid(1)
    if i < a.size:
        inner = cuda.selp(b % 2 == 0, c[i], 13)
        a[i] = cuda.selp(a[i] > 4, inner, 3)
'''
    a, c = np.arange(8, dtype=np.int64), np.arange(8, dtype=np.int64) * 10
    load_cpu(source=src).k[1, 32](a, 4, c)
    assert a.tolist() == [3, 3, 3, 3, 3, 50, 60, 70]


def test_zip_and_enumerate_of_zip_over_arrays():
    """`for i, (xv, yv) in enumerate(zip(x, y))` (numba-cuda's test_iterators): as many steps as the shorter
    array, each name its element."""
    src = '''
from numba import cuda

@cuda.jit("void(float64[::1], float64[::1], float64[::1])")
def k(x, y, out):
    if cuda.grid(1) == 0:
        for i, (xv, yv) in enumerate(zip(x, y)):
            out[i] = xv * yv + i
        s = 0.0
        for a, b in zip(x[1:], y):
            s += a - b
        out[out.size - 1] = s
'''
    x, y, out = np.arange(6.0), np.arange(4.0) * 2, np.zeros(6)
    load_cpu(source=src).k[1, 32](x, y, out)
    assert out.tolist() == [x[i] * y[i] + i for i in range(4)] + [0, sum(a - b for a, b in zip(x[1:], y))]
    with pytest.raises(Exception, match=r"zip\(\) gives 2 items: unpack them into 2 names"):
        translate_source(src.replace("for a, b in zip", "for a in zip"))


def test_zip_of_tuples_iterates_their_items_by_index():
    """numba-cuda's test_zip: `for i, j in zip(t1, t2)` of two constant tuples (and a tuple zipped with an array)
    was "zip() of this iterable: only 1-D arrays and their views are iterated here"."""
    src = '''
from numba import cuda
T1 = (1, 2, 3)
T2 = (4.5, 5.6, 6.7)

@cuda.jit("void(float64[::1], int64[::1])")
def foo(a, b):
    c = 0
    for i, j in zip(T1, T2):
        c += i + j
    a[0] = c
    for x, y in zip(T1, b):
        a[1] += x * y
'''
    a, b = np.zeros(2), np.array([7, -2], np.int64)
    load_cpu(source=src).foo[1, 1](a, b)
    assert a.tolist() == [(1 + 4.5) + (2 + 5.6) + (3 + 6.7), 1 * 7 + 2 * -2]


def test_math_modf_unpacks_into_two_values():
    src = '''
import math
from numba import cuda

@cuda.jit("void(float64[::1], float64[::1], float64[::1], float32[::1])")
def k(a, frac, whole, f32):
    i = cuda.grid(1)
    if i < a.size:
        frac[i], whole[i] = math.modf(a[i])
        p, q = math.modf(f32[i])
        f32[i] = p - q
'''
    module = load_cpu(source=src)
    assert "n2c::modff(f32[i])" in module.cu
    a = np.array([2.5, -3.25, 0.0, 7.0, -0.5])
    frac, whole, f32 = np.zeros(5), np.zeros(5), a.astype(np.float32)
    module.k[1, 32](a, frac, whole, f32)
    assert [(f, w) for f, w in zip(frac, whole)] == [math.modf(v) for v in a]
    assert f32.tolist() == [np.float32(math.modf(v)[0] - math.modf(v)[1]) for v in a]


def test_a_tuple_index_through_an_integer_cast():
    """`cuda.grid(2)[types.uint32(0)]` and `out.shape[types.uint32(0)]` (sgkit): a constant index, cast."""
    src = '''
from numba import cuda, types

@cuda.jit("void(float64[:, ::1])")
def k(out):
    i = cuda.grid(2)[types.uint32(0)]
    j = cuda.grid(2)[types.uint32(1)]
    if i < out.shape[types.uint32(0)] and j < out.shape[types.uint32(1)]:
        out[i, j] = i * 10 + j
'''
    out = np.zeros((3, 4))
    load_cpu(source=src).k[(1, 1), (4, 4)](out)
    assert out.tolist() == [[i * 10 + j for j in range(4)] for i in range(3)]


def test_a_tuple_passed_to_a_device_function():
    """`args = A[i], A[i] + B[i], B[i]` then `mapper(args)`, the device function unpacking or indexing it
    (numba-cuda's test_cuda_jit_no_types): the tuple's items travel as parameters of their own."""
    src = '''
from numba import cuda

@cuda.jit(device=True)
def mapper(args):
    a, b, c = args
    return a + b + c

@cuda.jit(device=True)
def weighted(pair, w):
    return pair[0] * w + pair[1]

@cuda.jit("void(float32[::1], float32[::1], int64[::1])")
def driver(A, B, C):
    i = cuda.grid(1)
    if i < B.size:
        args = A[i], A[i] + B[i], B[i]
        B[i] = mapper(args) + 1
        C[i] = weighted((i, 2 * i), 3) + weighted((C[i], i), 1)
'''
    module = load_cpu(source=src)
    assert "mapper(float args_0, float args_1, float args_2)" in module.cu.replace("const ", "")
    A, B, C = np.arange(6, dtype=np.float32), np.arange(6, dtype=np.float32) * 2, np.full(6, 5, np.int64)
    expected_b = A + (A + B) + B + 1
    module.driver[1, 32](A, B, C)
    assert B.tolist() == expected_b.tolist()
    assert C.tolist() == [i * 3 + 2 * i + 5 + i for i in range(6)]
    with pytest.raises(Exception, match="array used as a value"):  # an array inside the tuple, added to numbers
        translate_source(src.replace("args = A[i], A[i] + B[i], B[i]", "args = A, A[i] + B[i], B[i]"))


def test_zip_over_ranges_as_pylops_writes_it():
    """`for ixx, hxx in zip(range(a, b), range(c, d))` (PyLops' NonStationaryConvolve2D), a negative step and an
    array zipped in: as many steps as the shortest, each range's bounds read once before the loop."""
    src = '''
from numba import cuda

@cuda.jit("void(float64[::1], int64, int64, int64, int64)")
def k(out, a, b, c, d):
    if cuda.grid(1) == 0:
        n = 0
        for i, j in zip(range(a, b), range(c, d)):
            out[n] = i * 100 + j
            n += 1
            b = 0  # the range was made before: changing b does not shorten it
        for i, j, v in zip(range(a + 7, a, -2), range(5), out[:3]):
            out[n] = i * 100 + j + v
            n += 1
'''
    module = load_cpu(source=src)
    assert "j = j_start + i_index;" in module.cu
    for a, b, c, d in [(2, 9, 4, 7), (5, 1, 0, 9), (0, 10, 3, 20), (-3, 3, 0, 2)]:
        out, expected = np.zeros(40), np.zeros(40)
        module.k[1, 32](out, a, b, c, d)
        n = 0
        for i, j in zip(range(a, b), range(c, d)):
            expected[n] = i * 100 + j
            n += 1
        for i, j, v in zip(range(a + 7, a, -2), range(5), expected[:3]):  # a live view, as in Numba
            expected[n] = i * 100 + j + v
            n += 1
        assert out.tolist() == expected.tolist(), (a, b, c, d)
    with pytest.raises(Exception, match="only a nonzero integer literal step"):
        translate_source(src.replace("range(a + 7, a, -2)", "range(a + 7, a, c)"))


def test_a_tuple_parameter_bounds_a_loop_goes_to_a_device_function_and_has_a_length():
    """`for j in range(shape[1])` makes shape's item a specialised loop bound the translation assumes >= 0: the
    launch checks that item and names it (shape[1]), as it names a scalar parameter; len(shape) is a constant
    and total(shape) passes the tuple on."""
    src = '''
from numba import cuda, float32

@cuda.jit(device=True)
def total(t):
    return t[0] + t[1]

@cuda.jit("void(float32[:, ::1], UniTuple(int64, 2), float32[::1])")
def rowsum(a, shape, out):
    i = cuda.grid(1)
    if i < shape[0]:
        acc = float32(0)
        for j in range(shape[1]):
            acc += a[i, j]
        out[i] = acc + total(shape) + len(shape)
'''
    module = load_cpu(source=src)
    assert "template <int SHAPE_1>" in module.cu and "total(shape_0, shape_1) + 2" in module.cu
    a, out = np.arange(12, dtype=np.float32).reshape(3, 4), np.zeros(3, np.float32)
    module.rowsum[1, 32](a, a.shape, out)
    assert out.tolist() == (a.sum(axis=1) + 7 + 2).tolist()
    module.rowsum[1, 32](a, (3, 0), out)
    assert out.tolist() == [5, 5, 5]
    with pytest.raises(ValueError, match=r"rowsum\(\): argument 'shape\[1\]' must be >= 0 \(the translation assumes "
                                         r"it >= 0\), got -1"):
        module.rowsum[1, 32](a, (3, -1), out)


def test_a_named_slice_of_a_row_is_a_pointer_into_the_array():
    """`center = spheres[i, :3]` (a ray tracer's sphere centres) names a slice of a row, a view of a view: its
    pointer is the row's (was `const float *center = ;`, which nvcc rejected: exit 70)."""
    src = '''
from numba import cuda

@cuda.jit(device=True)
def dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]

@cuda.jit("void(float32[::1], float32[:, ::1])")
def lengths(out, spheres):
    i = cuda.grid(1)
    if i < out.size:
        center = spheres[i, :3]
        tail = spheres[i][1:]
        out[i] = dot3(center, center) + tail[tail.size - 1] + center.size
'''
    module = load_cpu(source=src)
    assert "const float *center = spheres + i * spheres_shape1;" in module.cu
    spheres = np.arange(20, dtype=np.float32).reshape(5, 4)
    out = np.zeros(5, np.float32)
    module.lengths[1, 32](out, spheres)
    assert out.tolist() == [float((s[:3] ** 2).sum() + s[3] + 3) for s in spheres]


@pytest.mark.gpu
def test_gpu_a_column_major_array_matches_numbas():
    """On the GPU: a kernel typed for a column-major matrix (a transpose Numba copies as it lies) gives Numba's
    result from a NumPy F array, a Numba device array of one and a torch tensor laid out so; a C-ordered tensor is
    refused with the spelling that makes one."""
    from pathlib import Path

    import torch
    from numba import cuda

    import numba2cuda
    from translator.userimport import import_path

    path = Path(__file__).parent / "verify_fixtures" / "real_world_constructs_5.py"  # its kernel `transposed`
    original, translated = import_path(str(path)), numba2cuda.load(path, progress=False)
    rng = np.random.default_rng(5)
    A, y = rng.random((300, 200), dtype=np.float32), rng.random((100, 200), dtype=np.float32)
    B = y.T  # F-contiguous, as the pulsar pipeline's data.T
    grid, block = ((300 + 15) // 16, (100 + 15) // 16), (16, 16)
    expected = cuda.to_device(np.zeros((300, 100), np.float32))
    original.transposed[grid, block](cuda.to_device(A), cuda.to_device(B), expected)
    expected = expected.copy_to_host()
    C = np.zeros((300, 100), np.float32)
    translated.transposed[grid, block](A, B, C)
    assert np.array_equal(C, expected)
    out = torch.zeros((300, 100), dtype=torch.float32, device="cuda")
    translated.transposed[grid, block](torch.from_numpy(A).cuda(), torch.from_numpy(y).cuda().T, out)
    torch.cuda.synchronize()
    assert np.array_equal(out.cpu().numpy(), expected)
    C[:] = 0
    translated.transposed[grid, block](cuda.to_device(A), cuda.to_device(B), C)
    assert np.array_equal(C, expected)
    with pytest.raises(TypeError, match=r"argument 'b' must be array\(float32, 2d, F\).*pass b.T.contiguous\(\).T"):
        row_major = torch.from_numpy(np.ascontiguousarray(B)).cuda()
        translated.transposed[grid, block](torch.from_numpy(A).cuda(), row_major, out)


def test_a_unicode_character_sequence_is_said_to_be_numbas_string_type():
    """typeof of a NumPy '<U12' array prints `[unichr x 12][::1]` (numba-cuda's test_const_string): it was called a
    type a library adds to Numba."""
    from translator.ir.typesys import TypeStringError, parse_type

    for spelled in ("[unichr x 12][::1]", "[char x 4][::1]"):
        with pytest.raises(TypeStringError, match=r"Numba's string types, such as UnicodeCharSeq"):
            parse_type(spelled)
