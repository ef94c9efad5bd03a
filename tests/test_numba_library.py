"""numba-cuda's library as kernels call it (issue 17): cooperative groups, numba.cuda.random, complex numbers and
cmath, cuda.fp16, vectorize/guvectorize; translated and run on the CPU runtime against Numba or NumPy."""

from __future__ import annotations

import cmath
import math
import re

import numpy as np
import pytest

from translator import translate_source
from translator.runtime.cpu_launch import load_cpu
from translator.runtime.cpurun import CpuLaunchError
from translator.userimport import import_path

HEAD = "import math\nimport numpy as np\nfrom numba import cuda, float32, float64, int32, int64\n"


# ------------------------------------------------------------------ cooperative groups

GRID_SYNC = HEAD + '''
@cuda.jit("void(float64[::1], float64[::1], int64, float64)")
def heat(buf_0, buf_1, timesteps, k):
    i = cuda.grid(1)
    if i >= len(buf_0):
        return
    grid = cuda.cg.this_grid()
    for step in range(timesteps):
        if (step % 2) == 0:
            data = buf_0
            next_data = buf_1
        else:
            data = buf_1
            next_data = buf_0
        curr_temp = data[i]
        if i == 0:
            next_temp = curr_temp + k * (data[i + 1] - (2 * curr_temp))
        elif i == len(data) - 1:
            next_temp = curr_temp + k * (data[i - 1] - (2 * curr_temp))
        else:
            next_temp = curr_temp + k * (data[i - 1] - (2 * curr_temp) + data[i + 1])
        next_data[i] = next_temp
        grid.sync()

@cuda.jit("void(int32[:, ::1])")
def sequential_rows(M):
    col = cuda.grid(1)
    g = cuda.cg.this_grid()
    rows = M.shape[0]
    cols = M.shape[1]
    for row in range(1, rows):
        opposite = cols - col - 1
        M[row, col] = M[row - 1, opposite] + 1
        g.sync()

@cuda.jit("void(int32[::1])")
def early_exit(out):
    if cuda.blockIdx.x == 1:
        return
    out[cuda.grid(1)] = 1
    cuda.cg.this_grid().sync()
'''


def heat_reference(data, steps, k):
    bufs = [data.copy(), np.zeros_like(data)]
    for step in range(steps):
        d, nxt = bufs[step % 2], bufs[1 - step % 2]
        new = np.empty_like(d)
        new[0] = d[0] + k * (d[1] - 2 * d[0])
        new[-1] = d[-1] + k * (d[-2] - 2 * d[-1])
        new[1:-1] = d[1:-1] + k * (d[:-2] - 2 * d[1:-1] + d[2:])
        nxt[:] = new
    return bufs


@pytest.fixture(scope="module")
def grid_sync_module():
    return load_cpu(source=GRID_SYNC)


@pytest.mark.needs("g++")
def test_grid_sync_is_a_cooperative_launch(grid_sync_module):
    cu = grid_sync_module.cu
    assert "#include <cooperative_groups.h>" in cu
    assert "cooperative_groups::this_grid().sync();  // <string>:" in cu
    assert "cudaLaunchCooperativeKernel(kernel, grid, block, args, shared_bytes, stream)" in cu
    assert "return n2c_launch_cooperative(sequential_rows, grid, block, args, shared_bytes, static_shared, stream);" in cu


@pytest.mark.needs("g++")
def test_grid_barrier_orders_every_block_on_the_cpu_runtime(grid_sync_module):
    n = 1001
    data = np.zeros(n)
    data[500] = 10000.0
    b0, b1 = data.copy(), np.zeros(n)
    grid_sync_module.heat[(n + 127) // 128, 128](b0, b1, 60, 0.25)  # 8 blocks, each step a grid barrier
    r0, r1 = heat_reference(data, 60, 0.25)
    assert np.array_equal(b0, r0) and np.array_equal(b1, r1)
    M = np.zeros((64, 128), np.int32)
    grid_sync_module.sequential_rows[4, 32](M)
    assert np.array_equal(M, np.tile(np.arange(64, dtype=np.int32), (128, 1)).T)


@pytest.mark.needs("g++")
def test_a_block_that_never_reaches_the_grid_barrier_is_a_deadlock(grid_sync_module):
    with pytest.raises(CpuLaunchError, match=r"deadlock: .*this_grid\(\)\.sync\(\)"):
        grid_sync_module.early_exit[3, 32](np.zeros(96, np.int32))


@pytest.mark.needs("g++")
def test_a_cooperative_grid_larger_than_the_device_holds_names_the_limit(grid_sync_module):
    n = 40000 * 64
    with pytest.raises(CpuLaunchError, match=r"cooperative launch of 40000 blocks exceeds the 4224 .*132 SMs x 32 "
                                             r"blocks of 64 threads"):
        grid_sync_module.heat[40000, 64](np.zeros(n), np.zeros(n), 1, 0.25)


@pytest.mark.needs("g++")
def test_grid_sync_through_a_device_function_makes_the_kernel_cooperative():
    src = HEAD + '''
@cuda.jit(device=True)
def barrier():
    cuda.cg.this_grid().sync()

@cuda.jit("void(int32[::1], int32[::1])")
def k(a, b):
    i = cuda.grid(1)
    a[i] = i
    barrier()
    b[i] = a[a.shape[0] - 1 - i]
'''
    cu = translate_source(src)
    assert "n2c_launch_cooperative(k, grid, block" in cu
    a, b = np.zeros(256, np.int32), np.zeros(256, np.int32)
    load_cpu(source=src).k[8, 32](a, b)
    assert b.tolist() == list(range(255, -1, -1))


# ------------------------------------------------------------------ numba.cuda.random

RANDOM = '''import numpy as np
from numba import cuda
from numba.cuda.random import (init_xoroshiro128p_state, xoroshiro128p_jump, xoroshiro128p_next,
                               xoroshiro128p_normal_float32, xoroshiro128p_normal_float64,
                               xoroshiro128p_uniform_float32, xoroshiro128p_uniform_float64)

NUMBA2CUDA_TYPES = {"draw": "states=xoroshiro128p_type[::1], out=float64[:, ::1]",
                    "reseed": "states=xoroshiro128p_type[::1], seed=int64, out=uint64[::1]"}

@cuda.jit
def draw(states, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        for k in range(0, out.shape[1] - 1, 5):
            out[i, k] = xoroshiro128p_uniform_float32(states, i)
            out[i, k + 1] = xoroshiro128p_uniform_float64(states, i)
            out[i, k + 2] = xoroshiro128p_normal_float32(states, i)
            out[i, k + 3] = xoroshiro128p_normal_float64(states, i)
            out[i, k + 4] = xoroshiro128p_next(states, i) >> 11
        out[i, out.shape[1] - 1] = xoroshiro128p_uniform_float32(states, i - out.shape[0])

@cuda.jit
def reseed(states, seed, out):
    i = cuda.grid(1)
    if i < states.shape[0]:
        init_xoroshiro128p_state(states, i, seed + i)
        xoroshiro128p_jump(states, i)
        out[i] = xoroshiro128p_next(states, i)
'''


def numba_cpu_draws(states, cols):
    """The same draws by numba-cuda's own functions, compiled for the CPU (the reference here)."""
    import numba
    from numba.cuda.random import (xoroshiro128p_next, xoroshiro128p_normal_float32, xoroshiro128p_normal_float64,
                                   xoroshiro128p_uniform_float32, xoroshiro128p_uniform_float64)

    @numba.njit
    def run(states, out):
        n = out.shape[0]
        for i in range(n):
            for k in range(0, out.shape[1] - 1, 5):
                out[i, k] = xoroshiro128p_uniform_float32(states, i)
                out[i, k + 1] = xoroshiro128p_uniform_float64(states, i)
                out[i, k + 2] = xoroshiro128p_normal_float32(states, i)
                out[i, k + 3] = xoroshiro128p_normal_float64(states, i)
                out[i, k + 4] = xoroshiro128p_next(states, i) >> 11
            out[i, out.shape[1] - 1] = xoroshiro128p_uniform_float32(states, i - n + len(states))

    out = np.zeros((len(states) if cols else 0, cols))
    run(states, out)
    return out


@pytest.fixture(scope="module")
def random_module():
    return load_cpu(source=RANDOM)


@pytest.mark.needs("g++")
def test_xoroshiro128p_state_layout_and_calls(random_module):
    cu = random_module.cu
    assert "__global__ void draw(n2c::xoroshiro128p_state *states, int64_t states_shape0, double *out" in cu
    assert "n2c::xoroshiro128p_uniform_float32(&states[i])" in cu
    assert "struct xoroshiro128p_state {\n    uint64_t s0;\n    uint64_t s1;\n};" in cu


@pytest.mark.needs("g++")
def test_draws_from_numbas_states_are_numbas_numbers(random_module):
    from numba.cuda.random import init_xoroshiro128p_states_cpu, xoroshiro128p_dtype

    states = np.empty(70, dtype=xoroshiro128p_dtype)
    init_xoroshiro128p_states_cpu(states, 1234, 0)  # what create_xoroshiro128p_states copies to the GPU
    mine = states.copy()
    out = np.zeros((70, 16))
    random_module.draw[3, 32](mine, out)
    expected = numba_cpu_draws(states, 16)  # advances `states` as the kernel advances `mine`
    assert np.array_equal(out, expected)
    assert np.array_equal(mine, states)


def test_a_star_import_of_numba_cuda_random_brings_its_draws():
    """A genetic algorithm writes `from numba.cuda.random import *`: a library module's star import was unread,
    and the draws were "call to xoroshiro128p_uniform_float32(): is not supported in kernels"."""
    star = RANDOM.replace(RANDOM[RANDOM.index("from numba.cuda.random import ("):RANDOM.index("\n\nNUMBA2CUDA")],
                          "from numba.cuda.random import *")
    assert "import *" in star and "xoroshiro128p_jump," not in star
    def body(cu):  # the header names the source's hash, and comments its lines, two fewer in `star`
        return re.sub(r"<string>:\d+", "", cu.split("\n", 1)[1])
    assert body(translate_source(star)) == body(translate_source(RANDOM))


@pytest.mark.needs("g++")
def test_seeding_and_jumping_in_a_kernel(random_module):
    import numba
    from numba.cuda.random import (init_xoroshiro128p_state, xoroshiro128p_dtype, xoroshiro128p_jump,
                                   xoroshiro128p_next)

    @numba.njit
    def reference(states, seed, out):
        for i in range(states.shape[0]):
            init_xoroshiro128p_state(states, i, seed + i)
            xoroshiro128p_jump(states, i)
            out[i] = xoroshiro128p_next(states, i)

    states = np.zeros(40, dtype=xoroshiro128p_dtype)
    ref_states, out, ref = states.copy(), np.zeros(40, np.uint64), np.zeros(40, np.uint64)
    random_module.reseed[2, 32](states, -5, out)
    reference(ref_states, -5, ref)
    assert np.array_equal(out, ref) and np.array_equal(states, ref_states)


@pytest.mark.needs("g++")
def test_states_must_be_xoroshiro128p_records(random_module):
    with pytest.raises(TypeError, match="argument 'states' must be a C-contiguous 1-D array of xoroshiro128p states"):
        random_module.draw[1, 32](np.zeros((32, 2), np.uint64), np.zeros((32, 6)))
    src = RANDOM.replace("xoroshiro128p_uniform_float32(states, i - out.shape[0])",
                         "xoroshiro128p_uniform_float32(out, i)")
    from translator.errors import UserError
    with pytest.raises(UserError, match="xoroshiro128p_uniform_float32\\(\\) states: must be the 1-D array of "
                                        "xoroshiro128p states"):
        translate_source(src)


@pytest.mark.needs("g++")
def test_a_states_fields_are_read_by_name():
    """An Ising model takes random low bits straight from `rng_states[i]["s0"]`, then advances the state: a record's
    field read by name, as Numba reads a record. Was: "subscript: only arrays and constant tuples can be indexed".
    A field the record lacks is a located error naming the fields it has."""
    from numba.cuda.random import init_xoroshiro128p_states_cpu, xoroshiro128p_dtype
    from translator.errors import UserError

    src = '''
import numpy as np
from numba import cuda
from numba.cuda import random as ncrand

@cuda.jit("void(xoroshiro128p_type[::1], uint64[::1])")
def bits(rng_states, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        low = rng_states[i]["s0"] & np.uint64(255)
        ncrand.xoroshiro128p_next(rng_states, i)
        out[i] = low + (rng_states[i]["s1"] >> np.uint64(60))
'''
    states = np.empty(40, dtype=xoroshiro128p_dtype)
    init_xoroshiro128p_states_cpu(states, 7, 0)
    before, out = states.copy(), np.zeros(40, np.uint64)
    load_cpu(source=src).bits[2, 32](states, out)
    expected = (before["s0"] & np.uint64(255)) + (states["s1"] >> np.uint64(60))
    assert np.array_equal(out, expected) and not np.array_equal(states, before)
    with pytest.raises(UserError, match="record field: xoroshiro128p_type has the fields 's0', 's1'"):
        translate_source(src.replace('["s1"]', '["s2"]'))


PI_HITS = '''
@cuda.jit
def pi_hits(rng_states, iterations, out):
    i = cuda.grid(1)
    hits = 0
    for _ in range(iterations):
        x = xoroshiro128p_uniform_float32(rng_states, i)
        y = xoroshiro128p_uniform_float32(rng_states, i)
        if x * x + y * y <= 1.0:
            hits += 1
    out[i] = hits
'''


def test_the_states_parameter_needs_no_declaration():
    """Numba learns the states' type at the launch, and no signature string spells it: the real-world kernels that
    draw (numba-cuda's docs among them) declare their other parameters only, or nothing. A parameter handed to the
    draws as their states is typed as create_xoroshiro128p_states' array; the others still need their types."""
    from translator.errors import UserError
    from translator.ir.typesys import parse_types_option
    from translator.lower.program import Options

    src = RANDOM.split("NUMBA2CUDA_TYPES")[0] + PI_HITS
    with pytest.raises(UserError, match="the types of iterations, out are unknown"):
        translate_source(src)
    cu = translate_source(src, options=Options(types=parse_types_option("iterations=int64, out=int32[::1]")))
    assert "// kernel pi_hits(rng_states: xoroshiro128p_type[::1], iterations: int64, out: int32[::1])" in cu
    assert "__global__ void pi_hits(n2c::xoroshiro128p_state *rng_states," in cu


# ------------------------------------------------------------------ the GPU: Numba's own launches beside ours

@pytest.mark.gpu
def test_gpu_draws_and_grid_sync_match_numba(tmp_path):
    """On the GPU: states from create_xoroshiro128p_states give Numba's numbers bit for bit (passed as Numba's
    device array, as a NumPy copy and as torch words), and a cooperative launch matches Numba's."""
    import torch
    from numba import cuda
    from numba.cuda.random import create_xoroshiro128p_states

    import numba2cuda

    path = tmp_path / "gpu_library.py"
    path.write_text(RANDOM + GRID_SYNC.replace(HEAD, "\nimport math\nfrom numba import float32, float64, int32, int64\n"))
    original = import_path(str(path))
    translated = numba2cuda.load(path, progress=False)

    n = 5000
    numba_states, our_states = create_xoroshiro128p_states(n, seed=42), create_xoroshiro128p_states(n, seed=42)
    numba_out = cuda.to_device(np.zeros((n, 16)))
    original.draw[(n + 127) // 128, 128](numba_states, numba_out)
    our_out = torch.zeros((n, 16), dtype=torch.float64, device="cuda")
    translated.draw[(n + 127) // 128, 128](our_states, our_out)
    torch.cuda.synchronize()
    assert np.array_equal(our_out.cpu().numpy(), numba_out.copy_to_host())
    assert np.array_equal(our_states.copy_to_host(), numba_states.copy_to_host())
    host = numba_states.copy_to_host()  # a NumPy record array: copied in and, being advanced, back out
    translated.draw[(n + 127) // 128, 128](host, our_out)
    original.draw[(n + 127) // 128, 128](numba_states, numba_out)
    assert np.array_equal(host, numba_states.copy_to_host())
    assert np.array_equal(our_out.cpu().numpy(), numba_out.copy_to_host())

    size = 1001
    data = np.zeros(size)
    data[500] = 10000.0
    nb0, nb1 = cuda.to_device(data), cuda.to_device(np.zeros(size))
    original.heat[(size + 127) // 128, 128](nb0, nb1, 500, 0.25)
    t0 = torch.tensor(data, device="cuda")
    t1 = torch.zeros(size, dtype=torch.float64, device="cuda")
    translated.heat[(size + 127) // 128, 128](t0, t1, 500, 0.25)
    torch.cuda.synchronize()
    assert np.array_equal(t0.cpu().numpy(), nb0.copy_to_host()) and np.array_equal(t1.cpu().numpy(), nb1.copy_to_host())
    big = torch.zeros(10_000_000, dtype=torch.float64, device="cuda")
    with pytest.raises(RuntimeError, match=r"cudaErrorCooperativeLaunchTooLarge: .*the kernel calls "
                                           r"cuda.cg.this_grid\(\)\.sync\(\).* at most \d+ blocks of 128 threads"):
        translated.heat[(10_000_000 + 127) // 128, 128](big, big.clone(), 1, 0.25)


def test_record_arrays_cross_into_torch_as_their_words():
    pytest.importorskip("torch")
    from numba.cuda.random import xoroshiro128p_dtype

    from translator.runtime.launch import _record_words
    from translator.runtime.records import as_words, from_words
    from translator.verify.compare import compare_arrays

    states = np.zeros(5, dtype=xoroshiro128p_dtype)
    states["s1"] = np.arange(5)

    class DeviceStates:  # what create_xoroshiro128p_states returns, as far as __cuda_array_interface__ goes
        __cuda_array_interface__ = {"shape": (5,), "typestr": "|V16", "descr": xoroshiro128p_dtype.descr,
                                    "data": (1234, False), "strides": None, "version": 3}

    cai = _record_words(DeviceStates()).__cuda_array_interface__
    assert cai["shape"] == (5, 2) and cai["typestr"] == "<u8" and cai["data"] == (1234, False)
    words = as_words(states)
    assert words.shape == (5, 2) and words[:, 1].tolist() == list(range(5)) and np.shares_memory(words, states)
    assert np.array_equal(from_words(words, states), states)
    other = states.copy()
    other["s0"][3] = 9
    report = compare_arrays(states, other)
    assert not report.ok and report.first_index == (3, 0)


# ------------------------------------------------------------------ complex numbers and cmath

def complex_arithmetic(z, w):
    a = z * w + 1.5j
    b = a / (z + np.float32(2))  # complex64 + float32 stays complex64
    c = z - w * 2  # an int64 makes it complex128
    d = complex(z.real, w.imag) + complex(abs(z))
    e = -z + z.conjugate() * w.imag
    f = z * z  # (z ** 2 is numba-cuda's cpow, not CPU Numba's product: test_complex_powers_follow_numba_cudas_cpow)
    g = 0j
    for k in range(3):
        g += w / (k + 1j)
    return a, b, c, d, e, f, g, z == w, z != w


def complex_cmath(z, w):
    r, phi = cmath.polar(z)
    return (cmath.exp(z), cmath.log(w), cmath.sqrt(z), cmath.sqrt(w * 1e30), cmath.sin(z), cmath.cos(w),
            cmath.tan(z), cmath.sinh(w), cmath.cosh(z), cmath.tanh(w), cmath.log10(z), cmath.phase(w),
            cmath.rect(r, phi), cmath.rect(np.float32(2.5), phi), cmath.exp(np.float32(0.5)),
            cmath.isnan(z), cmath.isinf(w), cmath.isfinite(z), cmath.log(z, w))  # log(z, w): numba-cuda's tests


def complex_kernel_source(fn, arity, dtype):
    import inspect
    import textwrap

    body = textwrap.dedent(inspect.getsource(fn))
    outs = ", ".join(f"r{k}" for k in range(arity))
    stores = "\n        ".join(f"out[i, {k}] = r{k}" for k in range(arity))
    return f'''import cmath
import math
import numpy as np
from numba import cuda


@cuda.jit(device=True)
{body}

@cuda.jit("void({dtype}[::1], {dtype}[::1], complex128[:, ::1])")
def apply(a, b, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        {outs} = {fn.__name__}(a[i], b[i])
        {stores}
'''


def complex_inputs(dtype):
    rng = np.random.default_rng(11)
    parts = rng.standard_normal((2, 2, 120)) * 3
    special = [0j, -0j, complex(np.inf, 0.5), complex(-np.inf, 2), complex(0.5, np.inf), complex(np.nan, 1),
               complex(1, np.nan), 3e38 + 2e38j, -2.5 + 0j, 1j, complex(-np.inf, np.inf), 1e-30 + 1e-30j]
    z = np.concatenate([parts[0, 0] + 1j * parts[0, 1], special, special[::-1]]).astype(dtype)
    w = np.concatenate([parts[1, 0] + 1j * parts[1, 1], special[::-1], special]).astype(dtype)
    return z, w


@pytest.mark.needs("g++")
@pytest.mark.parametrize("fn", [complex_arithmetic, complex_cmath], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_numbers_match_numba(fn, dtype):
    import numba

    z, w = complex_inputs(dtype)
    reference = numba.njit(fn)
    with np.errstate(all="ignore"):
        expected = np.array([[complex(v) for v in reference(a, b)] for a, b in zip(z, w)])
    module = load_cpu(source=complex_kernel_source(fn, expected.shape[1], dtype))
    out = np.full(expected.shape, np.nan + 0j)
    module.apply[(len(z) + 63) // 64, 64](z, w, out)
    same = (out.view(np.float64) == expected.view(np.float64)) | (np.isnan(out.view(np.float64))
                                                                  & np.isnan(expected.view(np.float64)))
    if not same.all():
        i, k = np.argwhere(~same.reshape(len(z), -1, 2).any(axis=2) | ~same.reshape(len(z), -1, 2).all(axis=2))[0]
        pytest.fail(f"{fn.__name__}[{dtype}]: output {k} for ({z[i]!r}, {w[i]!r}): C gave {out[i, k]!r}, "
                    f"Numba gives {expected[i, k]!r}")


@pytest.mark.needs("g++")
def test_complex_arrays_and_their_types_in_the_c():
    src = HEAD + '''
@cuda.jit("void(complex64[::1], complex128[:, ::1])")
def k(z, out):
    i = cuda.grid(1)
    if i < z.shape[0]:
        out[i, 0] = z[i] * 2j
        out[i, 1] = np.complex64(z[i].real) + z[i].imag
'''
    module = load_cpu(source=src)
    assert "__global__ void k(const n2c::complex64 *z, int64_t z_shape0, n2c::complex128 *out" in module.cu
    z = (np.arange(5) + 1j * np.arange(5, 10)).astype(np.complex64)
    out = np.zeros((5, 2), np.complex128)
    module.k[1, 8](z, out)
    assert np.array_equal(out[:, 0], z.astype(np.complex128) * 2j)
    assert np.array_equal(out[:, 1], z.real.astype(np.complex64) + z.imag)


COMPLEX_SCALARS = '''
@cuda.jit("void(complex128[::1], complex128, complex64[::1], complex64)")
def scale(z, c, w, d):
    i = cuda.grid(1)
    if i < z.size:
        z[i] = z[i] * c + 1
        w[i] = w[i] * d
        c = c * 2
'''


@pytest.mark.needs("g++")
def test_complex_scalar_kernel_parameters_cross_as_their_parts():
    """numba-cuda's test_complex_kernel: a complex64/complex128 scalar parameter (before: refused). C takes its
    real and imaginary parts and the body starts from complex(re, im); the launcher takes any number, as Numba
    converts it, and refuses what is not one."""
    module = load_cpu(source=HEAD + COMPLEX_SCALARS)
    assert "double c_re, double c_im, n2c::complex64 *w, float d_re, float d_im" in module.cu
    assert "n2c::complex128 c = n2c::complex128(c_re, c_im);" in module.cu
    z = np.arange(6) + 1j * np.arange(6, 12)
    w = z.astype(np.complex64)
    expected_z, expected_w = z * (0.5 - 2j) + 1, w * np.complex64(1j)
    module.scale[1, 8](z, 0.5 - 2j, w, 1j)
    assert np.array_equal(z, expected_z) and np.array_equal(w, expected_w)
    module.scale[1, 8](z, 3, w, np.float32(2))  # a real number is a complex one with no imaginary part
    assert np.array_equal(z, expected_z * 3 + 1)
    with pytest.raises(TypeError, match=r"scale\(\): argument 'c' must be a number \(complex128\), got str"):
        module.scale[1, 8](z, "1j", w, 1j)


def test_ordering_complex_numbers_is_a_located_error():
    from translator.errors import UserError

    with pytest.raises(UserError, match="'<' on a complex number"):
        translate_source(HEAD + '''
@cuda.jit("void(complex64[::1], int32[::1])")
def k(z, out):
    out[0] = z[0] < z[1]
''')


# ------------------------------------------------------------------ vectorize / guvectorize

UFUNCS = '''import math
import numpy as np
from numba import cuda, guvectorize, vectorize

@vectorize(["float32(float32, float32)", "float64(float64, float64)", "int64(int64, int64)"], target="cuda")
def rel_diff(x, y):
    return 2 * abs(x - y) / (abs(x) + abs(y) + 1)

@vectorize("float64(float64)", target="cpu")
def on_the_cpu(x):
    return x + 1

@guvectorize(["void(float32[:], float32, float32[:])", "void(float64[:], float64, float64[:])"], "(n),()->(n)",
             target="cuda")
def scale_row(row, f, out):
    for k in range(row.shape[0]):
        out[k] = row[k] * f + k
'''


@pytest.fixture(scope="module")
def ufunc_module():
    return load_cpu(source=UFUNCS)


@pytest.mark.needs("g++")
def test_vectorize_makes_one_elementwise_kernel_per_signature(ufunc_module):
    cu = ufunc_module.cu
    assert "__global__ void rel_diff_float32_float32(const float *x, int64_t x_step, const float *y, " \
           "int64_t y_step, float *out, int64_t out_shape0)" in cu
    assert "out[tid] = rel_diff(x[tid * x_step], y[tid * y_step]);" in cu
    assert "rel_diff_int64_int64" in cu and "on_the_cpu" not in cu
    assert "scale_row(row + tid * row_shape1, row_shape1, f[tid], out + tid * out_shape1, out_shape1);" in cu


def test_ufuncs_defined_inside_a_test_function():
    """numba-cuda's own tests define ufuncs inside test methods; their kernels call the core function by its key
    there (was KeyError, exit 70)."""
    cu = translate_source("""
from numba import guvectorize, vectorize

def test_inside():
    @guvectorize(["void(float32[:], float32[:], float32[:])"], "(n),(n)->(n)", target="cuda")
    def dist(a, b, out):
        for i in range(a.shape[0]):
            out[i] = a[i] * b[i]

    @vectorize(["float32(float32, float32)"], target="cuda")
    def vadd(a, b):
        return a + b
""", "inside.py")
    assert "out[tid] = vadd(a[tid * a_step], b[tid * b_step]);" in cu
    assert "dist(a + tid * a_shape1, a_shape1, b + tid * b_shape1, b_shape1, out + tid * out_shape1, " in cu


@pytest.mark.needs("g++")
def test_vectorize_call_broadcasts_and_picks_the_loop_as_numba(ufunc_module):
    rel_diff = ufunc_module.rel_diff
    ref = lambda x, y: 2 * np.abs(x - y) / (np.abs(x) + np.abs(y) + 1)  # noqa: E731
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    r = rel_diff(x, np.float32(2.5))
    assert r.dtype == np.float32 and r.shape == (2, 3)
    assert np.array_equal(r, ref(x.astype(np.float64), 2.5).astype(np.float32))
    assert rel_diff(x, 2.5).dtype == np.float32  # an untyped scalar takes the arrays' loop
    r64 = rel_diff(np.arange(3.0), np.ones((4, 3)))  # (3,) against (4, 3)
    assert r64.shape == (4, 3) and np.array_equal(r64, np.broadcast_to(ref(np.arange(3.0), 1.0), (4, 3)))
    i = rel_diff(np.arange(5), 3)
    assert i.dtype == np.int64 and np.array_equal(i, (2 * np.abs(np.arange(5) - 3) / (np.arange(5) + 4)).astype(np.int64))
    out = np.zeros((2, 3), np.float32)
    assert rel_diff(x, x[1], out=out) is out and np.array_equal(out, ref(x, x[1]).astype(np.float32))
    with pytest.raises(TypeError, match="no matching version"):
        rel_diff(x, np.ones(3))  # float32 with float64 arrays: casting='no', as Numba
    with pytest.raises(TypeError, match="ambiguous signature"):
        rel_diff(np.int32(1), np.int32(2))  # no loop of their own type: every loop matches


@pytest.mark.needs("g++", "c++")
def test_guvectorize_call_loops_over_the_outer_dimensions(ufunc_module):
    scale_row = ufunc_module.scale_row
    rows = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    r = scale_row(rows, np.float32(2))
    assert r.shape == (2, 3, 4) and np.array_equal(r, rows * 2 + np.arange(4, dtype=np.float32))
    out = np.zeros_like(rows)
    scale_row(rows, np.array([[1, 2, 3]], np.float32), out)
    assert np.array_equal(out, rows * np.array([1, 2, 3], np.float32)[None, :, None] + np.arange(4))
    assert scale_row(np.ones(4), 3.0).dtype == np.float64


@pytest.mark.gpu
def test_gpu_ufuncs_match_numbas(tmp_path):
    import torch
    from numba import cuda

    import numba2cuda

    path = tmp_path / "ufuncs.py"
    path.write_text(UFUNCS)
    original = import_path(str(path))
    translated = numba2cuda.load(path, progress=False)
    x = np.random.default_rng(1).standard_normal((300, 7)).astype(np.float32)
    y = np.random.default_rng(2).standard_normal(7).astype(np.float32)
    # host in, host out. numba-cuda 0.30.4 broadcasts y (7,) against x (300, 7) wrongly: every column gets y[0]
    # (measured on the H200; numba/numba#6421 is open). numba2cuda broadcasts as NumPy does, which is Numba's
    # result on the broadcast operands
    wide = np.ascontiguousarray(np.broadcast_to(y, x.shape))
    assert np.array_equal(translated.rel_diff(x, y), original.rel_diff(x, wide))
    dx = torch.from_numpy(x).cuda()
    got = translated.rel_diff(dx, np.float32(0.5))  # a device input: the result stays on the device
    assert isinstance(got, torch.Tensor) and got.is_cuda
    assert np.array_equal(got.cpu().numpy(), original.rel_diff(cuda.to_device(x), np.float32(0.5)).copy_to_host())
    rows = np.random.default_rng(3).standard_normal((50, 9)).astype(np.float64)
    assert np.array_equal(translated.scale_row(rows, 1.5), original.scale_row(rows, 1.5))


# ------------------------------------------------------------------ float16 and cuda.fp16

FP16 = '''import math
import numpy as np
from numba import cuda, float16, float32
from numba.cuda import fp16

@cuda.jit("void(float16[::1], float16[::1], float16, float32[::1])")
def k(a, b, s, out32):
    i = cuda.grid(1)
    if i < a.shape[0]:
        x = a[i]
        y = b[i]
        z = fp16.hfma(x, y, s) + x * y - fp16.hdiv(x, s)
        w = math.sqrt(fp16.habs(z))
        b[i] = w if fp16.hgt(w, abs(x)) else fp16.hneg(w)
        out32[i] = float32(z) + np.float16(0.5) * 2 + float32(fp16.hmax(x, y))
'''


@pytest.mark.needs("g++")
def test_float16_through_cuda_fp16_rounds_as_the_gpu():
    module = load_cpu(source=FP16)
    assert "__global__ void k(const __half *a, int64_t a_shape0, __half *b, __half s, float *out32)" in module.cu
    assert "__half z = __hfma(x, y, s) + x * y - __hdiv(x, s);" in module.cu and "#include <cuda_fp16.h>" in module.cu
    assert "__hgt(w, __habs(x))" in module.cu  # abs() of a half (fabs is ambiguous there: nvcc refused it)
    rng = np.random.default_rng(4)
    a = (rng.standard_normal(300) * 4).astype(np.float16)
    b0 = (rng.standard_normal(300) * 4).astype(np.float16)
    s = np.float16(1.75)
    b, out32 = b0.copy(), np.zeros(300, np.float32)
    module.k[10, 32](a, b, s, out32)
    h = np.float16
    fma = (a.astype(np.float64) * b0 + np.float64(s)).astype(h)  # one rounding, as __hfma
    z = (fma + (a * b0)) - (a / s)  # NumPy rounds each float16 operation to half, as the GPU does
    w = np.sqrt(np.abs(z))
    assert np.array_equal(b, np.where(w > np.abs(a), w, -w))
    assert np.array_equal(out32, (z.astype(np.float64) + 1.0 + np.fmax(a, b0).astype(np.float32)).astype(np.float32))


def cpow_reference(a: complex, b: complex) -> complex:
    """numba-cuda's cpow_internal (CPython's _Py_c_pow) in float64, step by step with the C library's own functions
    (Python's math raises where C gives inf or -inf: pow(0, -1), log(0))."""
    import ctypes
    import ctypes.util

    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    for name in ("hypot", "pow", "atan2", "exp", "log", "cos", "sin"):
        getattr(libm, name).restype = ctypes.c_double
        getattr(libm, name).argtypes = [ctypes.c_double] * (2 if name in ("hypot", "pow", "atan2") else 1)
    if b.real == 0.0 and b.imag == 0.0:
        return complex(1.0, 0.0)
    if a.real == 0.0 and b.real == 0.0:
        return complex(0.0, 0.0)
    vabs = libm.hypot(a.real, a.imag)
    length = libm.pow(vabs, b.real)
    at = libm.atan2(a.imag, a.real)
    phase = at * b.real
    if b.imag != 0.0:
        length /= libm.exp(at * b.imag)
        phase += b.imag * libm.log(vabs)
    c, s = libm.cos(phase), libm.sin(phase)
    unit = (s * 0.0 - 0.0 * 1.0, s * 1.0 + 0.0 * 0.0)  # complex(s) * 1j, all four products
    w = (c + unit[0], 0.0 + unit[1])
    return complex(length * w[0] - 0.0 * w[1], length * w[1] + 0.0 * w[0])


@pytest.mark.needs("g++")
def test_complex_powers_follow_numba_cudas_cpow():
    """x[i] ** y[i] of complex arrays (numba-cuda's test_powi), a float and an integer exponent (Numba makes
    both complex first), a literal 2 too: numba-cuda's cpow, bit for bit in complex128 on the CPU runtime."""
    src = '''
import numpy as np
from numba import cuda

@cuda.jit("void(complex128[::1], complex128[::1], complex128[::1], float64[::1], int64[::1], complex128[:, ::1])")
def k(r, x, y, f, n, more):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = x[i] ** y[i]
        more[i, 0] = x[i] ** f[i]
        more[i, 1] = x[i] ** n[i]
        more[i, 2] = pow(x[i], y[i])
        more[i, 3] = x[i] ** 2
'''
    module = load_cpu(source=src)
    assert "n2c::cpow(x[i], y[i])" in module.cu
    rng = np.random.default_rng(5)
    x = rng.random(32) + 1j * rng.random(32)
    y = rng.random(32) + 1j * rng.random(32)
    x[:4] = [0j, 1j, 0j, -2.5 + 0j]
    y[:4] = [0j, 1.0 + 0j, 0.5j, 1.5 + 0j]
    f, n = rng.random(32) * 3 - 1, np.arange(32) % 5 - 2
    r, more = np.zeros(32, np.complex128), np.zeros((32, 4), np.complex128)
    module.k[1, 32](r, x, y, f, n, more)
    same = np.testing.assert_array_equal  # exact, NaN where NaN (0j ** -1.5 is inf + nan j, as in C)
    same(r, [cpow_reference(complex(a), complex(b)) for a, b in zip(x, y)])
    same(more[:, 0], [cpow_reference(complex(a), complex(b)) for a, b in zip(x, f)])
    same(more[:, 1], [cpow_reference(complex(a), complex(int(b))) for a, b in zip(x, n)])
    same(more[:, 2], r)
    same(more[:, 3], [cpow_reference(complex(a), 2 + 0j) for a in x])  # not x * x: measured on the H200
    with np.errstate(all="ignore"):
        assert np.allclose(r[4:], x[4:] ** y[4:], rtol=1e-12)  # and it is the power NumPy computes
    # complex64: every step in float32 (powf, hypotf, ...), as numba-cuda's complex64 cpow
    src64 = src.replace("complex128", "complex64")
    module64 = load_cpu(source=src64)
    x64, y64 = x[4:].astype(np.complex64), y[4:].astype(np.complex64)
    f64, n64 = f[4:], n[4:]
    r64, more64 = np.zeros(28, np.complex64), np.zeros((28, 4), np.complex64)
    module64.k[1, 32](r64, x64, y64, f64, n64, more64)
    assert np.allclose(r64, x64.astype(np.complex128) ** y64.astype(np.complex128), rtol=1e-5)


# ------------------------------------------------------------------ tuple and complex parameters on the GPU

PARAMS_AND_POWERS = '''import numpy as np
from numba import cuda

@cuda.jit("void(float32[:, ::1], UniTuple(int64, 2), Tuple((float64, int32)))")
def fill(out, shape, scale):
    i, j = cuda.grid(2)
    if i < shape[0] and j < shape[1]:
        out[i, j] = (i * shape[1] + j) * scale[0] + scale[1]

@cuda.jit("void(complex128[::1], complex128[::1], complex128[:, ::1])")
def powers(z, y, out):
    i = cuda.grid(1)
    if i < z.size:
        out[i, 0] = z[i] ** 2
        out[i, 1] = z[i] ** y[i]
        out[i, 2] = z[i] ** 3
        out[i, 3] = z[i] ** 0.5
        out[i, 4] = pow(z[i], 2.0)
'''


@pytest.mark.gpu
def test_gpu_tuple_and_complex_parameters_and_complex_powers_match_numba(tmp_path):
    """The drop-in spreads a tuple into its items and a complex scalar into its parts for the binding; on the GPU
    both must launch and give Numba's numbers bit for bit. Complex powers, the literal z ** 2 included, must be
    numba-cuda's cpow: which columns differ is part of the message, so that a failure says which spelling."""
    import torch
    from numba import cuda

    import numba2cuda

    path = tmp_path / "params_and_powers.py"
    path.write_text(PARAMS_AND_POWERS + COMPLEX_SCALARS)
    original = import_path(str(path))
    translated = numba2cuda.load(path, progress=False)

    theirs = cuda.to_device(np.zeros((13, 21), np.float32))
    original.fill[(4, 6), (4, 4)](theirs, (13, 21), (0.25, 3))
    ours = torch.zeros((13, 21), dtype=torch.float32, device="cuda")
    translated.fill[(4, 6), (4, 4)](ours, (13, 21), (0.25, 3))
    torch.cuda.synchronize()
    assert np.array_equal(ours.cpu().numpy(), theirs.copy_to_host())

    rng = np.random.default_rng(5)
    z = rng.standard_normal(300) + 1j * rng.standard_normal(300)
    z[:4] = [0j, 1j, -2.5 + 0j, 1e-30 + 1e-30j]
    w = z.astype(np.complex64)
    nz, nw = cuda.to_device(z), cuda.to_device(w)
    original.scale[3, 128](nz, 0.5 - 2j, nw, 1j)
    tz, tw = torch.from_numpy(z).cuda(), torch.from_numpy(w).cuda()
    translated.scale[3, 128](tz, 0.5 - 2j, tw, 1j)
    torch.cuda.synchronize()
    assert np.array_equal(tz.cpu().numpy(), nz.copy_to_host())
    assert np.array_equal(tw.cpu().numpy(), nw.copy_to_host())

    y = rng.standard_normal(300) + 1j * rng.standard_normal(300)
    y[:3] = [0j, 2 + 0j, 0.5 + 0j]
    theirs = cuda.to_device(np.zeros((300, 5), np.complex128))
    original.powers[3, 128](cuda.to_device(z), cuda.to_device(y), theirs)
    ours = torch.zeros((300, 5), dtype=torch.complex128, device="cuda")
    translated.powers[3, 128](torch.from_numpy(z).cuda(), torch.from_numpy(y).cuda(), ours)
    torch.cuda.synchronize()
    expected, got = theirs.copy_to_host(), ours.cpu().numpy()
    spelled = ["z ** 2", "z ** y", "z ** 3", "z ** 0.5", "pow(z, 2.0)"]
    differ = [f"{spelled[c]}: {int((got[:, c] != expected[:, c]).sum())} of 300 differ, first at "
              f"{int(np.flatnonzero(got[:, c] != expected[:, c])[0])}" for c in range(5)
              if not np.array_equal(got[:, c], expected[:, c], equal_nan=True)]
    assert not differ, "; ".join(differ)


def test_a_cooperative_group_made_and_dropped_is_nothing():
    """`cuda.cg.this_grid()` alone as a statement (numba-cuda's cooperative-groups tests): Numba makes the group
    and drops it, and launches the kernel cooperatively (its test asserts so); the translation writes nothing for
    the statement (it was 'expression statement: has no effect') and launches cooperatively too."""
    cu = translate_source("""
from numba import cuda

@cuda.jit("void(float32[::1])")
def this_grid(A):
    cuda.cg.this_grid()
    A[0] = 1.0
""", "cg.py")
    assert "{\n    A[0] = 1.0f;  // cg.py:7\n}" in cu
    assert "cudaLaunchCooperativeKernel" in cu


# ------------------------------------------------------------------ cuda.declare_device (FFI)

FFI_KERNELS = '''
import os
from pathlib import Path

from numba import cuda


def test_linking():
    basedir = os.path.dirname(os.path.abspath(__file__))
    product = cuda.declare_device("product", "float32(float32, float32)",
                                  link=os.path.join(basedir, "ffi", "functions.cu"))

    @cuda.jit
    def multiply(r, x, y):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = product(x[i], y[i])


def test_includes():
    from numba.cuda import config
    here = Path(__file__).parent
    config.CUDA_NVRTC_EXTRA_SEARCH_PATHS = ":".join([str(here / "ffi" / "include")])
    affine = cuda.declare_device("affine", sig="float32(float32, float32, float32)",
                                 link=str(here / "ffi" / "affine.cu"))
    halve = cuda.declare_device("halve", "float32(float32)", link="ffi/plain.cu", abi="c")

    @cuda.jit("void(float32, float32[::1], float32[::1], float32[::1])")
    def vector_affine(a, x, y, res):
        i = cuda.grid(1)
        if i < len(res):
            res[i] = affine(a, x[i], y[i]) + halve(x[i])
'''


@pytest.mark.needs("g++")
def test_foreign_device_functions_carry_their_linked_source(tmp_path):
    """numba-cuda's FFI documentation examples: cuda.declare_device with link= (a path made with os.path or pathlib
    from __file__), Numba's ABI (the result through a first pointer) and abi="c", and an #include found in
    config.CUDA_NVRTC_EXTRA_SEARCH_PATHS. The translation carries the linked CUDA source, so the .cu compiles alone."""
    from translator.ir.typesys import parse_types_option
    from translator.lower.program import Options

    (tmp_path / "ffi" / "include").mkdir(parents=True)
    (tmp_path / "ffi" / "functions.cu").write_text(
        'extern "C" __device__ int product(float *out, float a, float b)\n{\n    *out = a * b;\n    return 0;\n}\n')
    (tmp_path / "ffi" / "include" / "twice.cuh").write_text(
        "template <typename T>\n__device__ T twice(T v) { return v + v; }\n")
    (tmp_path / "ffi" / "affine.cu").write_text(
        '#include <twice.cuh>\nextern "C" __device__ int affine(float *out, float a, float x, float y)\n'
        "{\n    *out = twice(a) * x + y;\n    return 0;\n}\n")
    (tmp_path / "ffi" / "plain.cu").write_text('extern "C" __device__ float halve(float v) { return v * 0.5f; }\n')
    path = tmp_path / "ffi_kernels.py"
    path.write_text(FFI_KERNELS)
    module = load_cpu(path, options=Options(types=parse_types_option("r=float32[::1], x=float32[::1], "
                                                                     "y=float32[::1]")))
    cu = module.cu
    assert "// ---- functions.cu, linked by cuda.declare_device" in cu and "*out = twice(a) * x + y;" in cu
    assert f"// #include <twice.cuh> (carried from {tmp_path}/ffi/include/twice.cuh)" in cu
    assert "__device__ __forceinline__ float product_value(float a0, float a1)" in cu
    assert "res[i] = affine_value(a, x[i], y[i]) + halve(x[i]);" in cu  # abi="c" is called as declared
    x = np.linspace(-2, 2, 9, dtype=np.float32)
    y = x[::-1].copy()
    r, res = np.zeros(9, np.float32), np.zeros(9, np.float32)
    module.multiply[1, 32](r, x, y)
    module.vector_affine[1, 32](np.float32(1.5), x, y, res)
    assert r.tolist() == (x * y).tolist()
    assert res.tolist() == ((np.float32(3.0) * x + y) + x * np.float32(0.5)).tolist()


@pytest.mark.needs("g++")
def test_a_kernel_link_carries_the_source_of_a_function_declared_without_one(tmp_path):
    """`cuda.declare_device("inject", sig)` with the file in the kernel's own @cuda.jit(link=[...]), as Numba
    documents and a fault-injection matmul writes it: was 'no link= names the CUDA source that defines it'."""
    (tmp_path / "inject.cu").write_text(
        'extern "C" __device__ int inject(float *out, float v, int bit)\n{\n    *out = bit ? -v : v;\n'
        "    return 0;\n}\n")
    path = tmp_path / "faults.py"
    path.write_text('''
import os
from numba import cuda

inject = cuda.declare_device("inject", "float32(float32, int32)")
SRC = os.path.join(os.path.dirname(__file__), "inject.cu")


@cuda.jit("void(float32[::1], int32)", link=[SRC])
def flip(x, bit):
    i = cuda.grid(1)
    if i < x.shape[0]:
        x[i] = inject(x[i], bit)


@cuda.jit("void(float32[::1])", link=[SRC])
def keep(x):
    x[0] = inject(x[0], 0)
''')
    module = load_cpu(path)
    assert module.cu.count("extern \"C\" __device__ int inject(") == 1  # two kernels link it: carried once
    x = np.arange(1, 6, dtype=np.float32)
    module.flip[1, 32](x, np.int32(1))
    assert x.tolist() == [-1.0, -2.0, -3.0, -4.0, -5.0]


FROM_BUFFER = '''
import os
from numba import cuda


def test_from_buffer():
    import cffi
    import numpy as np

    here = os.path.dirname(os.path.abspath(__file__))
    total = cuda.declare_device("total", "float32(CPointer(float32), int32)", link=os.path.join(here, "total.cu"))
    ffi = cffi.FFI()

    @cuda.jit
    def sum_into(out, values):
        ptr = ffi.from_buffer(values)
        out[()] = total(ptr, len(values)) + out[()]

    out = np.ndarray((), dtype=np.float32)
    sum_into[1, 1](out, np.arange(4, dtype=np.float32))
'''


@pytest.mark.needs("g++")
def test_ffi_from_buffer_passes_a_pointer_and_a_0d_array_holds_the_result(tmp_path):
    """numba-cuda's from_buffer doc example: `ffi.from_buffer(a)` is a CPointer to the array's elements, passed to
    a foreign function declared with CPointer(float32), and `result[()]` is the one element of a 0-d array (was
    'numba2cuda passes numbers to foreign functions, not pointers', and the 0-d array had no type spelling)."""
    from translator.ir.typesys import parse_types_option
    from translator.lower.program import Options

    (tmp_path / "total.cu").write_text(
        'extern "C" __device__ int total(float *out, float *a, int n)\n{\n    float s = 0;\n'
        "    for (int i = 0; i < n; ++i) s += a[i];\n    a[0] = -1;\n    *out = s;\n    return 0;\n}\n")
    path = tmp_path / "from_buffer.py"
    path.write_text(FROM_BUFFER)
    module = load_cpu(path, options=Options(types=parse_types_option("out=float32[()], values=float32[::1]")))
    assert "float *ptr = values;" in module.cu  # not const: the foreign code may write through it
    assert "out[0] = total_value(ptr, (int)values_shape0) + out[0];" in module.cu
    out, values = np.array(np.float32(0.5)), np.arange(1, 5, dtype=np.float32)
    module.sum_into[1, 1](out, values)
    assert out.shape == () and float(out) == 10.5
    assert values.tolist() == [-1, 2, 3, 4]  # what the foreign function wrote through the pointer shows


@pytest.mark.parametrize("body, message", [
    ("out[()] = total(values, len(values))", "argument 'values': the foreign function takes a CPointer here"),
    ("out[()] = total(ffi.from_buffer(doubles), len(values))", "takes CPointer(float32), got CPointer(float64)"),
])
def test_a_foreign_pointer_argument_must_be_a_from_buffer_pointer_of_its_type(tmp_path, body, message):
    """An array passed where a foreign function takes CPointer(float32) is refused, as Numba refuses it, and so is
    a pointer of another element type: each with a located message."""
    from translator.errors import UserError

    (tmp_path / "total.cu").write_text('extern "C" __device__ int total(float *out, float *a, int n);\n')
    source = FROM_BUFFER.replace("        ptr = ffi.from_buffer(values)\n        out[()] = total(ptr, len(values)) "
                                 "+ out[()]", "        " + body).replace("(out, values)", "(out, values, doubles)")
    path = tmp_path / "bad_buffer.py"
    path.write_text(source)
    from translator.ir.typesys import parse_types_option
    from translator.lower.program import Options

    types = parse_types_option("out=float32[()], values=float32[::1], doubles=float64[::1]")
    with pytest.raises(UserError) as info:
        translate_source(source, str(path), Options(types=types))
    assert message in str(info.value) and "bad_buffer.py:" in str(info.value)


CU_SOURCE = '''
import cffi
from numba import cuda, types

times2_cu = cuda.CUSource("""
extern "C" __device__ int times2(int *out, int a)
{
    *out = a * 2;
    return 0;
}
""")
mark_cu = cuda.CUSource("""
extern "C" __device__ void mark(int *a) { *a = 42; }
""")

times2 = cuda.declare_device("times2", "int32(int32)", link=times2_cu)
mark = cuda.declare_device("mark", types.void(types.CPointer(types.int32)), link=mark_cu, abi="c")
ffi = cffi.FFI()


@cuda.jit("void(int32[::1], int32[::1])")
def double_then_mark(r, x):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = times2(x[i])
        if i % 2 == 0:
            mark(ffi.from_buffer(x[i:]))
'''


@pytest.mark.needs("g++")
def test_inline_cuda_source_a_c_abi_void_function_and_a_signature_of_numba_types():
    """numba-cuda's declare_device tests link CUDA source given inline (`cuda.CUSource("...")`), declare a C-ABI
    function returning nothing, and write its signature as Numba's types: the source is carried, the function
    is called as a statement, and a pointer into a slice reaches it (was 'link path: numba2cuda reads paths made
    of strings' and 'calls foreign functions that return one number')."""
    module = load_cpu(source=CU_SOURCE)
    assert "// ---- cuda.CUSource at <string>:5, linked by cuda.declare_device" in module.cu
    assert "            mark(x + i);  // <string>:27" in module.cu  # a statement; the slice is a pointer offset
    x = np.arange(6, dtype=np.int32)
    r = np.zeros(6, np.int32)
    module.double_then_mark[1, 8](r, x)
    assert r.tolist() == [0, 2, 4, 6, 8, 10]
    assert x.tolist() == [42, 1, 42, 3, 42, 5]


FFI_MODULE = '''
import os
from numba import cuda

basedir = os.path.dirname(os.path.abspath(__file__))
product = cuda.declare_device("product", "float32(float32, float32)", link=os.path.join(basedir, "functions.cu"))
halve = cuda.declare_device("halve", "float32(float32)", link=os.path.join(basedir, "plain.cu"), abi="c")


@cuda.jit("void(float32[::1], float32[::1], float32[::1])")
def multiply(r, x, y):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = product(x[i], y[i]) + halve(x[i])
'''


@pytest.mark.gpu
def test_gpu_foreign_device_functions_match_numbas(tmp_path):
    """The linked CUDA source carried into the translation computes what Numba's linked call does, on the GPU."""
    import numba2cuda

    (tmp_path / "functions.cu").write_text(
        'extern "C" __device__ int product(float *out, float a, float b)\n{\n    *out = a * b;\n    return 0;\n}\n')
    (tmp_path / "plain.cu").write_text('extern "C" __device__ float halve(float v) { return v * 0.5f; }\n')
    path = tmp_path / "ffi_module.py"
    path.write_text(FFI_MODULE)
    original = import_path(str(path))
    translated = numba2cuda.load(path, progress=False)
    x = np.random.default_rng(5).standard_normal(1000).astype(np.float32)
    y = np.random.default_rng(6).standard_normal(1000).astype(np.float32)
    want, got = np.zeros_like(x), np.zeros_like(x)
    original.multiply[8, 128](want, x, y)
    translated.multiply[8, 128](got, x, y)
    assert np.array_equal(got, want)


@pytest.mark.needs("g++")
def test_atomics_on_the_parts_of_complex_elements():
    """`cuda.atomic.add(j.real, (iz, ir), v)` (fbpic's current deposition) and numba-cuda's complex tests add to one
    part of a complex element in place (was 'array attribute .real: only .shape, .size, .ndim and .dtype')."""
    module = load_cpu(source='''
from numba import cuda

@cuda.jit("void(complex128[::1], complex64[:, ::1])")
def deposit(values, grid):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(values.real, i, 1)
        cuda.atomic.add(values.imag, 0, 0.5)
        cuda.atomic.add(grid.real, (0, i % 2), 1.0)
        cuda.atomic.add(grid.imag, (1, 0), 2.0)
''')
    assert "atomicAdd(n2c::real_part(&values[i]), 1.0);" in module.cu
    values, grid = np.zeros(8, np.complex128), np.zeros((2, 2), np.complex64)
    module.deposit[1, 32](values, grid)
    assert values.tolist() == [complex(1, 4.0)] + [complex(1, 0)] * 7
    assert grid.tolist() == [[complex(4, 0), complex(4, 0)], [complex(0, 16), 0j]]


def test_nanosleep_waits_on_the_gpu_and_is_nothing_on_the_cpu():
    """A kernel that reports its progress sleeps each iteration (`cuda.nanosleep(KERNEL_SLEEP)`): it was "call to
    cuda.nanosleep(): is not supported in kernels". Its argument is uint32 nanoseconds, as Numba declares it."""
    src = '''
from numba import cuda

SLEEP = 1000

@cuda.jit("void(uint64[::1], int64)")
def report_progress(progress, n):
    for i in range(n):
        cuda.atomic.inc(progress, 0, n)
        cuda.nanosleep(SLEEP)
'''
    module = load_cpu(source=src)
    assert "__nanosleep(1000u);" in module.cu
    progress = np.zeros(1, np.uint64)
    module.report_progress[1, 1](progress, 50)
    assert progress[0] == 50


@pytest.mark.needs("g++")
def test_cache_hinted_loads_and_stores_are_cudas_own_intrinsics():
    """numba-cuda's cuda.ldcg/ldca/ldcs/ldlu/ldcv and cuda.stcg/stcs/stwb/stwt (cache_hints.py): the element's
    address given to CUDA's __ldcg/__stcs..., indexed as any array (a tuple for 2-D, -1 from the end). Before,
    each was "cuda.ldcg(): is not supported in kernels"."""
    from translator.errors import UserError

    src = '''
from numba import cuda

@cuda.jit("void(float32[::1], float64[:, ::1], int16[::1], float32[::1], int16[::1], float64[:, ::1])")
def k(x, m, s, out, s2, m2):
    i = cuda.grid(1)
    if i < out.size:
        v = cuda.ldcg(x, i) + cuda.ldcs(m, (i, 1)) + cuda.ldca(s, -1) + cuda.ldlu(x, 0) + cuda.ldcv(x, i)
        cuda.stcs(out, i, v)
        cuda.stwt(s2, i, 3)
        cuda.stcg(m2, (i, 0), 1.5)
        cuda.stwb(out, i, cuda.ldcg(out, i) * 2)
'''
    module = load_cpu(source=src)
    assert "__ldcs(&m[i * m_shape1 + 1])" in module.cu and "__stcs(&out[i], (float)v);" in module.cu
    x, m = np.arange(4, dtype=np.float32), np.arange(8, dtype=np.float64).reshape(4, 2)
    s, out = np.array([1, 2, 3, 7], np.int16), np.zeros(4, np.float32)
    s2, m2 = np.zeros(4, np.int16), np.zeros((4, 2))
    module.k[1, 32](x, m, s, out, s2, m2)
    v = x.astype(np.float64) + m[:, 1] + 7 + x[0] + x
    assert np.array_equal(out, v.astype(np.float32) * 2) and np.array_equal(s2, [3, 3, 3, 3])
    assert np.array_equal(m2[:, 0], [1.5] * 4) and np.array_equal(m2[:, 1], [0.0] * 4)
    with pytest.raises(UserError, match=r"cuda.ldcg\(\) index"):
        translate_source(src.replace("cuda.ldcg(x, i)", "cuda.ldcg(m, i)"))


@pytest.mark.needs("g++")
def test_a_foreign_function_declared_void_in_numbas_abi(tmp_path):
    """numba-cuda's link test: `cuda.declare_device("fill_ones", types.void(types.CPointer(types.float32),
    types.int32))` with Numba's ABI, whose C function still takes a result slot first (`int *ret`); it was
    'numba2cuda calls foreign functions that return one number'."""
    from translator.ir.typesys import parse_types_option
    from translator.lower.program import Options

    path = tmp_path / "fill.py"
    path.write_text('''
import cffi
from numba import cuda
from numba.cuda import types

fill = cuda.declare_device("fill_ones", types.void(types.CPointer(types.float32), types.int32),
                           link=cuda.CUSource('extern "C" __device__ int fill_ones(int *ret, float *p, int n)'
                                              ' { for (int i = 0; i < n; i++) p[i] = 1.0f; return 0; }'))
ffi = cffi.FFI()


@cuda.jit
def ones(x, n):
    if cuda.grid(1) == 0:
        fill(ffi.from_buffer(x), n)
''')
    module = load_cpu(path, options=Options(types=parse_types_option("x=float32[::1], n=int32")))
    assert "fill_ones((decltype(fill_ones_slot(&fill_ones)))r, a0, a1);" in module.cu
    x = np.zeros(6, np.float32)
    module.ones[1, 32](x, 4)
    assert x.tolist() == [1, 1, 1, 1, 0, 0]


@pytest.mark.needs("g++")
def test_nanmax_and_nanmin_of_an_integer_array_are_max_and_min():
    """numba-cuda compiles cuda.atomic.nanmax/nanmin on integer arrays (an integer has no NaN: they are max and
    min); numba2cuda refused them as float-only. Each returns the value it read first."""
    mod = load_cpu(source='''
from numba import cuda


@cuda.jit("void(int32[::1], uint64[::1], int64[::1], int32[::1])")
def extremes(hi, lo, v, old):
    i = cuda.grid(1)
    if i < v.shape[0]:
        old[i] = cuda.atomic.nanmax(hi, 0, v[i])
        cuda.atomic.nanmin(lo, 0, v[i])
''')
    v = np.array([5, -3, 12, 7, 0, 9], np.int64)
    hi, lo, old = np.array([1], np.int32), np.array([2**40], np.uint64), np.zeros(6, np.int32)
    mod.extremes[1, 6](hi, lo, v, old)
    assert hi[0] == 12 and lo[0] == 0  # uint64 min of a negative: -3 wraps to 2**64 - 3, so 0 is the least
    assert set(old.tolist()) <= {1, 5, 12, 7, 9, -3, 0} and 1 in old.tolist()
