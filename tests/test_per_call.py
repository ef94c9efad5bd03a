"""Kernels a host function makes on each call, reading that call's values (`B, C, H, W = x.shape` and the like):
Numba compiles one kernel per call with them baked in; the translation makes them template parameters."""

from __future__ import annotations

import ctypes
import re
import subprocess
import textwrap

import numpy as np
import pytest

from translator import translate_source
from translator.errors import UserError
from translator.frontend.module import parse_source
from translator.ir.typesys import parse_types_option
from translator.lower.program import Options, build_program

BLUR = textwrap.dedent("""
    import numpy as np
    from numba import cuda, float32


    def box_blur(image, radius=1, clamp=True):
        height, width = image.shape
        side = 2 * radius + 1
        area = side * side

        @cuda.jit
        def blur(src, dst):
            row = cuda.shared.array((side, 32), float32)
            y, x = cuda.grid(2)
            ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
            if ty < side and tx < 32:
                row[ty, tx] = 0
            cuda.syncthreads()
            if y < height and x < width:
                acc = float32(0)
                for dy in range(-radius, radius + 1):
                    for dx in range(-radius, radius + 1):
                        yy = y + dy
                        xx = x + dx
                        if clamp:
                            yy = min(max(yy, 0), height - 1)
                            xx = min(max(xx, 0), width - 1)
                        elif yy < 0 or yy >= height or xx < 0 or xx >= width:
                            continue
                        acc += src[yy, xx]
                dst[y, x] = acc / area + row[0, tx % 32]

        out = np.zeros_like(image)
        blur[((height + 7) // 8, (width + 7) // 8), (8, 8)](image, out)
        return out
""")
TYPES = Options(types=parse_types_option("src=float32[:, ::1], dst=float32[:, ::1]"))


def test_a_kernel_made_per_call_takes_that_calls_values_as_template_parameters():
    """Extents (x.shape), a parameter's default number or bool, and arithmetic on them are integers and bools of
    one call: before, each was 'closure variable ... is unpacked from a value numba2cuda cannot evaluate'."""
    cu = translate_source(BLUR, "blur.py", TYPES)
    params = "template <int64_t side, int64_t height, int64_t width, int64_t radius, bool clamp, int64_t area>"
    assert params + "\n__global__ void blur(" in cu
    assert "__shared__ float row[side][32];" in cu  # a shared array shaped by the call, as Numba's is
    assert "if (clamp) {" in cu and "for (int64_t dy = -radius; dy < radius + 1; ++dy)" in cu
    assert params + "\ncudaError_t blur_launch(" in cu  # no extern "C": a C++ caller instantiates it
    assert "n2c_launch(blur<side, height, width, radius, clamp, area>," in cu
    assert "static_shared = side * 128;" in cu
    notes = [n.render_note() for n in build_program(parse_source(BLUR, "blur.py"), TYPES).notices]
    assert any("reads side, height, width, radius, clamp, area of 'box_blur'" in n and "numba2cuda.load(kernel)" in n
               for n in notes)


def test_a_tuple_of_one_calls_values_shapes_a_shared_array():
    """An accelerator code's `threadperblock = (self.tpb, self.tpb)` shaping a shared array: the name was taken for
    one integer, and the kernel's 2-D indexing of the array was "too many indices: 'sh' has 1 dimension(s)"."""
    source = textwrap.dedent("""
        import numba
        from numba import cuda


        def run(x, tpb):
            threadperblock = (tpb, tpb)

            @cuda.jit
            def kmin(a, out):
                sh = cuda.shared.array(threadperblock, numba.float32)
                sh[cuda.threadIdx.x, cuda.threadIdx.y] = a[cuda.grid(1)]
                cuda.syncthreads()
                out[0] = sh[0, threadperblock[1] - 1] + len(threadperblock)

            kmin[1, threadperblock](x, x)
    """)
    cu = translate_source(source, "per_call_tuple.py",
                          Options(types=parse_types_option("a=float32[::1], out=float32[::1]")))
    assert "template <int64_t tpb>\n__global__ void kmin(" in cu
    assert "__shared__ float sh[tpb][tpb];" in cu
    assert "out[0] = (double)sh[0][n2c::wrap(tpb - 1, tpb)] + 2;" in cu  # float32 + int64 adds in float64


def _reference(image, radius, clamp):
    """What Numba computes: float32 sums in the loops' order, divided in float64 (float32 / int64)."""
    h, w = image.shape
    out = np.zeros_like(image)
    for y in range(h):
        for x in range(w):
            acc = np.float32(0)
            for dy in range(-radius, radius + 1):
                for dx in range(-radius, radius + 1):
                    yy, xx = y + dy, x + dx
                    if clamp:
                        yy, xx = min(max(yy, 0), h - 1), min(max(xx, 0), w - 1)
                    elif not (0 <= yy < h and 0 <= xx < w):
                        continue
                    acc = np.float32(acc + image[yy, xx])
            out[y, x] = np.float64(acc) / (2 * radius + 1) ** 2
    return out


def _shim(cu: str, radius: int, clamp: bool, height: int, width: int) -> str:
    """An extern "C" launcher of blur's instantiation for one call's values, in the template's order."""
    side = 2 * radius + 1
    values = {"side": side, "height": height, "width": width, "radius": radius,
              "clamp": "true" if clamp else "false", "area": side * side}
    order = re.search(r"template <(.*)>\n__global__", cu).group(1)
    args = ", ".join(str(values[p.split()[-1]]) for p in order.split(", "))
    return ('extern "C" cudaError_t blur_call_launch(dim3 grid, dim3 block, size_t shared, cudaStream_t stream, '
            "float *src, int64_t s0, int64_t s1, float *dst, int64_t d0, int64_t d1)\n"
            f"{{ return blur_launch<{args}>(grid, block, shared, stream, src, s0, s1, dst, d0, d1); }}\n")


@pytest.mark.needs("g++")
@pytest.mark.parametrize("radius, clamp", [(1, True), (2, False)])
def test_an_instantiation_runs_as_numbas_kernel_of_that_call(radius, clamp):
    from translator.runtime import cpurun

    cu = translate_source(BLUR, "blur.py", TYPES)
    image = np.random.default_rng(radius).random((5, 7), dtype=np.float32)
    lib = cpurun.compile_cpu(cu + _shim(cu, radius, clamp, 5, 7), name="per_call_blur")
    out = np.full_like(image, np.nan)
    i64 = cpurun.ctypes.c_int64
    cpurun.launch(lib, "blur_call", (1, 1), (8, 8), 0, image, 5, 7, out, 5, 7,
                  argtypes=[None, i64, i64, None, i64, i64])
    np.testing.assert_array_equal(out, _reference(image, radius, clamp))


@pytest.mark.needs("g++")
def test_the_self_check_compiles_each_kernel_made_per_call_instantiated():
    """A template's code is checked only where it is instantiated: translate's check adds one instantiation."""
    from translator.emit.render import render_program
    from translator.runtime.selfcheck import check_cu, instantiations

    program = build_program(parse_source(BLUR, "blur.py"), TYPES)
    cu = render_program(program, "blur.py")
    assert "&blur_launch<1, 1, 1, 1, 1, 1>;" in instantiations(program)
    # wrong only for the values a call gives (here any side > 0): the uninstantiated template compiles
    broken = re.sub(r"__syncthreads\(\);  // blur.py:\d+",
                    "typename std::enable_if<(side < 0), int>::type never = 0; __syncthreads();", cu)
    assert broken != cu
    assert check_cu(broken).ok
    assert not check_cu(broken, program=program).ok
    assert check_cu(cu, program=program).ok


def test_a_kernel_made_per_call_is_refused_where_python_would_launch_it():
    from translator.runtime.dropin import program_for

    with pytest.raises(UserError) as exc:
        program_for(parse_source(BLUR, "blur.py"), TYPES)
    text = str(exc.value)
    assert "blur.py:12:9" in text and "is made by each call of the function around it" in text
    assert "numba2cuda.load(kernel)" in text


def _error(src: str, types: str) -> str:
    with pytest.raises(UserError) as exc:
        translate_source(textwrap.dedent(src), "mod.py", Options(types=parse_types_option(types)))
    return str(exc.value)


def test_a_float_of_one_call_is_named_as_what_a_template_cannot_hold():
    text = _error("""
        from numba import cuda

        def scaler(x, gain):
            half = gain / 2

            @cuda.jit
            def scale(a):
                i = cuda.grid(1)
                if i < a.size:
                    a[i] *= half
            scale[1, 32](x)
        """, "a=float32[::1]")
    assert "mod.py:11:21: error: closure variable 'half': is a value of 'scaler' that each call computes" in text
    assert "a float, which a C++ template parameter" in text and "pass 'half' to the kernel as an argument" in text


def test_a_value_of_one_call_of_unknown_kind_hints_at_an_argument_not_at_importing():
    """HMM code reads N = params[0]: importing the module never calls the function, so --import-module (the
    hint before) cannot give its value. Where the kernel indexes or loops with it, it is an integer."""
    src = """
        from numba import cuda

        def fit(y, params):
            n = params[0]
            sigma = params[1]

            @cuda.jit
            def step(a):
                i = cuda.grid(1)
                for k in range(n):
                    a[i] += sigma
            step[1, 32](y)
        """
    text = _error(src, "a=float64[::1]")
    assert "closure variable 'sigma'" in text and "--import-module" not in text
    assert "pass 'sigma' to the kernel as an argument: each call of 'fit' computes it" in text
    cu = translate_source(textwrap.dedent(src.replace("+= sigma", "+= 1.0")), "mod.py",
                          Options(types=parse_types_option("a=float64[::1]")))
    assert "template <int64_t n>" in cu and "k < n;" in cu


@pytest.mark.gpu
@pytest.mark.parametrize("radius, clamp", [(1, True), (3, False)])
def test_an_instantiation_matches_numbas_kernel_of_that_call_on_the_gpu(tmp_path, radius, clamp):
    """The template instantiated at one call's values, built with nvcc, against the kernel Numba compiled for
    that call (the host function run as written), bit for bit."""
    import importlib.util

    import torch

    from translator.build.toolchain import cuda_home

    (tmp_path / "blur_module.py").write_text(BLUR)
    spec = importlib.util.spec_from_file_location("blur_module", tmp_path / "blur_module.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    image = np.random.default_rng(7).random((37, 45), dtype=np.float32)
    expected = module.box_blur(image, radius=radius, clamp=clamp)  # Numba: one kernel for this call

    cu = translate_source(BLUR, "blur.py", TYPES) + _shim(translate_source(BLUR, "blur.py", TYPES), radius, clamp,
                                                          37, 45)
    (tmp_path / "blur.cu").write_text(cu)
    major, minor = torch.cuda.get_device_capability()
    subprocess.run([f"{cuda_home()}/bin/nvcc", "-shared", "-Xcompiler", "-fPIC", "-std=c++17",
                    f"-arch=sm_{major}{minor}", "-o", str(tmp_path / "blur.so"), str(tmp_path / "blur.cu")],
                   check=True, capture_output=True)
    lib = ctypes.CDLL(str(tmp_path / "blur.so"))

    class Dim3(ctypes.Structure):
        _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]

    src = torch.from_numpy(image).cuda()
    dst = torch.full_like(src, float("nan"))
    launch = lib.blur_call_launch
    launch.restype = ctypes.c_int
    launch.argtypes = [Dim3, Dim3, ctypes.c_size_t, ctypes.c_void_p] + [ctypes.c_void_p, ctypes.c_int64,
                                                                        ctypes.c_int64] * 2
    torch.cuda.synchronize()
    rc = launch(Dim3((37 + 7) // 8, (45 + 7) // 8, 1), Dim3(8, 8, 1), 0, None, src.data_ptr(), 37, 45,
                dst.data_ptr(), 37, 45)
    torch.cuda.synchronize()
    assert rc == 0
    np.testing.assert_array_equal(dst.cpu().numpy(), expected)


STENCIL = textwrap.dedent("""
    import numpy as np
    from numba import cuda


    def stencil(x, weight=3):
        n = x.shape[0]

        @cuda.jit(device=True)
        def at(a, i):
            return a[min(max(i, 0), n - 1)]

        @cuda.jit(device=True)
        def smooth(a, i):
            return at(a, i - 1) + weight * at(a, i) + at(a, i + 1)

        @cuda.jit
        def apply(a, out):
            i = cuda.grid(1)
            if i < out.shape[0]:
                out[i] = smooth(a, i)

        out = np.zeros_like(x)
        apply[1, 64](x, out)
        return out
""")


@pytest.mark.needs("g++")
def test_device_functions_of_the_host_function_take_the_calls_values_their_callers_pass_on():
    """`at` reads n, `smooth` reads weight and calls `at`: each is a template, and each caller (the kernel last)
    passes the values on. Was 'closure variable 'n' ...' (then: a template parameter of a kernel only)."""
    from translator.runtime import cpurun

    options = Options(types=parse_types_option("a=float64[::1], out=float64[::1]"))
    cu = translate_source(STENCIL, "stencil.py", options)
    assert "template <int64_t n>\n__device__ double at(" in cu
    assert "template <int64_t weight, int64_t n>\n__device__ double smooth(" in cu
    assert "at<n>(a, a_shape0, i - 1) + weight * at<n>(a, a_shape0, i)" in cu
    assert "out[i] = smooth<weight, n>(a, a_shape0, i);" in cu
    shim = ('extern "C" cudaError_t apply_call_launch(dim3 grid, dim3 block, size_t shared, cudaStream_t stream, '
            "double *a, int64_t a0, double *out, int64_t o0)\n"
            "{ return apply_launch<5, 9>(grid, block, shared, stream, a, a0, out, o0); }\n")
    lib = cpurun.compile_cpu(cu + shim, name="per_call_stencil")
    x, out = np.arange(9.0) ** 2, np.zeros(9)
    i64 = cpurun.ctypes.c_int64
    cpurun.launch(lib, "apply_call", 1, 16, 0, x, 9, out, 9, argtypes=[None, i64, None, i64])
    padded = np.concatenate([x[:1], x, x[-1:]])
    np.testing.assert_array_equal(out, padded[:-2] + 5 * x + padded[2:])


def test_a_value_of_one_call_with_a_name_c_cannot_spell_is_renamed():
    """`σ = x.shape[0]`: the frontend spelt a per-call value by appending underscores until C accepted it, which
    never ends for a non-ASCII name (translate hung). lower/names.py spells it as it spells every other name."""
    cu = translate_source(textwrap.dedent("""
        from numba import cuda

        def scale(x):
            σ = x.shape[0]

            @cuda.jit
            def k(a):
                i = cuda.grid(1)
                if i < σ:
                    a[i] = 2 * a[i]
            k[1, 32](x)
    """), "mod.py", Options(types=parse_types_option("a=float32[::1]")))
    name = re.search(r"template <int64_t (\w+)>\n__global__ void k\(", cu).group(1)
    assert name.isascii() and f"if (i < {name}) {{" in cu
