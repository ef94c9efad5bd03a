"""CPU runtime (translator/runtime/n2c_cpu.h + translator/cpurun.py) on hand-written .cu text.

The kernels are written the way the translator emits them (extern "C" <name>_launch wrappers,
n2c_dynamic_smem, int64_t shapes) and compiled with the real header, so these tests pin down the
CUDA semantics the CPU tier of the checker relies on.
"""

from __future__ import annotations

import ctypes
import importlib.util
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.needs("g++")  # the CPU runtime compiles every kernel with g++

ROOT = Path(__file__).resolve().parents[1]
try:
    from translator.runtime import cpurun
except ImportError:  # the package may be mid-edit; the CPU runner has no dependencies on it
    _spec = importlib.util.spec_from_file_location("n2c_cpurun", ROOT / "translator" / "cpurun.py")
    cpurun = importlib.util.module_from_spec(_spec)
    sys.modules[_spec.name] = cpurun
    _spec.loader.exec_module(cpurun)

CpuLaunchError = cpurun.CpuLaunchError
i64, i32 = ctypes.c_int64, ctypes.c_int32

PRELUDE = """\
#include <cstdint>
#include <cstdio>
#include <cmath>
namespace n2c {
template <typename T> __device__ __forceinline__ T floordiv(T a, T b) { T q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; }
__device__ __forceinline__ unsigned dynamic_smem_size() {
#if defined(__CUDA_ARCH__)
    unsigned r; asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r)); return r;
#elif defined(N2C_CPU_RUNTIME)
    return n2c_cpu_dynamic_smem_size();
#endif
}
}
"""


def launcher(name: str, params: str, kernel: str | None = None, set_attr: bool = False) -> str:
    """The extern "C" wrapper the translator emits around one kernel instantiation."""
    kernel = kernel or name
    names = [p.strip().replace("*", " ").split()[-1] for p in params.split(",")]
    attr = (f"    cudaError_t err = cudaFuncSetAttribute({kernel}, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared_bytes);\n"
            "    if (err != cudaSuccess) return err;\n") if set_attr else ""
    return (f'extern "C" cudaError_t {name}_launch(dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream, {params})\n'
            "{\n"
            f"    void *args[] = {{{', '.join('&' + n for n in names)}}};\n{attr}"
            f"    return cudaLaunchKernel({kernel}, grid, block, args, shared_bytes, stream);\n"
            "}\n")


STATIC_SHARED = r"""
__global__ void static_shared(int *out, int *stale, unsigned *never)
{
    __shared__ int tile[64];
    __shared__ float never_written[4];
    int before = tile[threadIdx.x];
    __syncthreads();
    tile[threadIdx.x] = blockIdx.x * 1000 + threadIdx.x;
    __syncthreads();
    out[blockIdx.x * 64 + threadIdx.x] = tile[(threadIdx.x + 1) % 64];
    stale[blockIdx.x * 64 + threadIdx.x] = before;
    if (threadIdx.x < 4) never[blockIdx.x * 4 + threadIdx.x] = __float_as_uint(never_written[threadIdx.x]);
}
"""

MAIN = PRELUDE + STATIC_SHARED + r"""
static constexpr int64_t TILE = 16;
__constant__ float WEIGHTS[3] = {0.2989f, 0.587f, 0.114f};

__global__ void block_sum(const float *x, int64_t x_shape0, float *out)
{
    extern __shared__ __align__(16) unsigned char n2c_dynamic_smem[];
    float *buf = reinterpret_cast<float *>(n2c_dynamic_smem);
    int64_t i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = (i < x_shape0) ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = buf[0];
}


__global__ void dyn_dump(unsigned char *out, unsigned *size)
{
    extern __shared__ __align__(16) unsigned char n2c_dynamic_smem[];
    unsigned n = n2c::dynamic_smem_size();
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) out[blockIdx.x * n + i] = n2c_dynamic_smem[i];
    if (threadIdx.x == 0) size[blockIdx.x] = n;
    __syncthreads();
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) n2c_dynamic_smem[i] = 7;
}

__global__ void sync_reduce(const int *p, int *out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    int c = __syncthreads_count(p[t]);
    int a = __syncthreads_and(p[t]);
    int o = __syncthreads_or(p[t]);
    out[3 * t] = c; out[3 * t + 1] = a; out[3 * t + 2] = o;
}

__global__ void shuffles(const float *x, float *down, float *bfly, float *scan, float *bcast, float *seg8,
                         double *dxor, int64_t *lidx, int src)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[t];
    float s = v;
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    down[t] = s;
    float b = v;
    for (int m = 1; m < 32; m <<= 1) b += __shfl_xor_sync(0xffffffffu, b, m);
    bfly[t] = b;
    float sc = v;
    for (unsigned d = 1; d < 32; d <<= 1) {
        float u = __shfl_up_sync(0xffffffffu, sc, d);
        if ((threadIdx.x & 31) >= d) sc += u;
    }
    scan[t] = sc;
    bcast[t] = __shfl_sync(0xffffffffu, v, src);
    seg8[t] = __shfl_down_sync(0xffffffffu, v, 3, 8);
    dxor[t] = __shfl_xor_sync(0xffffffffu, (double)v * 0.5, 5);
    lidx[t] = __shfl_sync(0xffffffffu, (int64_t)t << 33, (int)threadIdx.x + 7, 16);
}

__global__ void votes(const int *p, unsigned *ballot, int *all, int *any, int *uni, unsigned *amask,
                      unsigned *many, unsigned *mall, int *mpred, unsigned *half)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    int v = p[t];
    ballot[t] = __ballot_sync(0xffffffffu, v & 1);
    all[t] = __all_sync(0xffffffffu, v & 1);
    any[t] = __any_sync(0xffffffffu, v & 1);
    uni[t] = __uni_sync(0xffffffffu, v & 1);
    amask[t] = 0;
    if (threadIdx.x % 3 == 0) amask[t] = __activemask();
    many[t] = __match_any_sync(0xffffffffu, v % 4);
    int pred = -1;
    mall[t] = __match_all_sync(0xffffffffu, (int64_t)(v / 1000), &pred);
    mpred[t] = pred;
    half[t] = 0;
    if ((threadIdx.x & 31) < 16) half[t] = __ballot_sync(0x0000ffffu, v & 1);
    __syncwarp();
}

__global__ void atomics(int *i32, unsigned *u32, unsigned long long *u64, float *f32, double *f64,
                        long long *i64, int *olds, unsigned short *u16)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&i32[0], 1);
    atomicSub(&i32[1], 2);
    atomicMax(&i32[2], (int)t);
    atomicMin(&i32[3], -(int)t);
    atomicAnd(&i32[4], ~(1 << (t % 31)));
    atomicOr(&i32[5], 1 << (t % 31));
    atomicXor(&i32[6], (int)t);
    olds[t] = atomicExch(&i32[7], (int)t);
    int old = i32[8], assumed;
    do { assumed = old; old = atomicCAS(&i32[8], assumed, assumed + 2); } while (old != assumed);
    atomicAdd(&i32[9], 2147483647);
    atomicAdd(&u32[0], 3u);
    atomicInc(&u32[1], 9u);
    atomicDec(&u32[2], 7u);
    atomicInc(&u32[3], 5u);
    atomicSub(&u32[4], 1u);
    atomicMax(&u32[5], t);
    atomicMin(&u32[6], t + 5u);
    atomicAdd(&u64[0], 1ull << 33);
    atomicMax(&u64[1], (unsigned long long)t << 40);
    atomicOr(&u64[2], 1ull << (t % 64));
    atomicCAS(&u64[3], 0ull, (unsigned long long)t + 100);
    atomicAdd(&f32[0], 0.5f);
    atomicExch(&f32[1], 2.0f);
    atomicAdd(&f64[0], 0.25);
    atomicMax(&i64[0], -(long long)t);
    atomicMin(&i64[1], (long long)t - 1000000000000LL);
    atomicCAS(&u16[0], (unsigned short)0, (unsigned short)(t + 7));
}

__global__ void ids3d(unsigned *out)
{
    unsigned lb = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned lt = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned g = lb * (blockDim.x * blockDim.y * blockDim.z) + lt;
    unsigned leader = __shfl_sync(0xffffffffu, lt, 0);
    unsigned *o = out + 8 * g;
    o[0] = threadIdx.x; o[1] = threadIdx.y; o[2] = threadIdx.z;
    o[3] = blockIdx.x; o[4] = blockIdx.y; o[5] = blockIdx.z;
    o[6] = leader; o[7] = (unsigned)warpSize;
}

__global__ void hello(int base)
{
    if (threadIdx.x < 2) printf("hello from block %u thread %u base %d w=%.3f\n", blockIdx.x, threadIdx.x, base, WEIGHTS[1]);
}

__global__ void exited_then_shfl(float *out)
{
    if (threadIdx.x >= 16) return;
    __syncthreads();
    out[threadIdx.x] = __shfl_sync(0xffffffffu, (float)threadIdx.x, threadIdx.x + 16);
}

__global__ void uninit_read(float *out)
{
    __shared__ float buf[32];
    if (threadIdx.x % 2 == 0) buf[threadIdx.x] = 1.0f;
    __syncthreads();
    out[blockIdx.x * 32 + threadIdx.x] = buf[threadIdx.x] + (float)n2c::floordiv<int64_t>(-7, 2);
}

template <int TW>
__global__ void matmul(const float *a, int64_t a_shape0, int64_t a_shape1, const float *b, int64_t b_shape1, float *c, int tw)
{
    (void)tw;
    __shared__ float ms[TW][TW];
    __shared__ float ns[TW][TW];
    int64_t tr = threadIdx.y, tc = threadIdx.x;
    int64_t r = blockIdx.y * blockDim.y + threadIdx.y;
    int64_t col = blockIdx.x * blockDim.x + threadIdx.x;
    float p = 0.0f;
    for (int64_t ph = 0; ph < (a_shape1 + TW - 1) / TW; ++ph) {
        int64_t k = ph * TW;
        ms[tr][tc] = (r < a_shape0 && k + tc < a_shape1) ? a[r * a_shape1 + k + tc] : 0.0f;
        ns[tr][tc] = (col < b_shape1 && k + tr < a_shape1) ? b[(k + tr) * b_shape1 + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TW; ++i) p += ms[tr][i] * ns[i][tc];
        __syncthreads();
    }
    if (r < a_shape0 && col < b_shape1) c[r * b_shape1 + col] = p;
}
""" + "\n".join([
    launcher("block_sum", "const float *x, int64_t x_shape0, float *out"),
    launcher("block_sum_big", "const float *x, int64_t x_shape0, float *out", kernel="block_sum", set_attr=True),
    launcher("static_shared", "int *out, int *stale, unsigned *never"),
    launcher("dyn_dump", "unsigned char *out, unsigned *size", set_attr=True),
    launcher("sync_reduce", "const int *p, int *out"),
    launcher("shuffles", "const float *x, float *down, float *bfly, float *scan, float *bcast, float *seg8, "
             "double *dxor, int64_t *lidx, int src"),
    launcher("votes", "const int *p, unsigned *ballot, int *all, int *any, int *uni, unsigned *amask, "
             "unsigned *many, unsigned *mall, int *mpred, unsigned *half"),
    launcher("atomics", "int *i32, unsigned *u32, unsigned long long *u64, float *f32, double *f64, "
             "long long *i64, int *olds, unsigned short *u16"),
    launcher("ids3d", "unsigned *out"),
    launcher("hello", "int base"),
    launcher("exited_then_shfl", "float *out"),
    launcher("uninit_read", "float *out"),
    launcher("matmul16", "const float *a, int64_t a_shape0, int64_t a_shape1, const float *b, int64_t b_shape1, "
             "float *c, int tw", kernel="matmul<16>"),
    launcher("matmul8", "const float *a, int64_t a_shape0, int64_t a_shape1, const float *b, int64_t b_shape1, "
             "float *c, int tw", kernel="matmul<8>"),
])

FAULTS = PRELUDE + r"""
__global__ void shfl_vs_barrier(float *out)
{
    float v = threadIdx.x;
    if (threadIdx.x % 32 < 16) v = __shfl_sync(0xffffffffu, v, 20);  // needs lanes 16..31
    else __syncthreads();                                          // needs lanes 0..15
    out[threadIdx.x] = v;
}

__global__ void exit_then_split(float *out)
{
    if (threadIdx.x >= 16) return;                                 // half the warp exits
    float v = threadIdx.x;
    if (threadIdx.x < 8) v = __shfl_sync(0xffffffffu, v, 9);       // waits for live lanes 8..15
    else __syncthreads();                                          // waits for lanes 0..7
    out[threadIdx.x] = v;
}

__global__ void divergent_barrier(float *out)
{
    if (threadIdx.x < 16) { __syncthreads(); out[threadIdx.x] = 1.0f; }
    else { __syncthreads(); out[threadIdx.x] = 2.0f; }
}

__global__ void mismatched(unsigned *out)
{
    if (threadIdx.x < 16) out[threadIdx.x] = __ballot_sync(0xffffffffu, 1);
    else out[threadIdx.x] = __any_sync(0xffffffffu, 1);
}

__global__ void not_in_mask(float *out)
{
    out[threadIdx.x] = __shfl_sync(0x1u, 1.0f, 0);
}

__global__ void trap(float *out)
{
    if (threadIdx.x == 5) __trap();
    out[threadIdx.x] = 1.0f;
}

__global__ void overrun(float *out)
{
    extern __shared__ __align__(16) unsigned char n2c_dynamic_smem[];
    n2c_dynamic_smem[n2c::dynamic_smem_size() + 8 * threadIdx.x] = 1;
    out[threadIdx.x] = 0.0f;
}

__global__ void early_exit_barrier(float *out)
{
    if (threadIdx.x >= 40) return;                                 // exited threads don't block
    __syncthreads();
    out[threadIdx.x] = 3.0f;
}
""" + "\n".join(launcher(n, p) for n, p in [
    ("shfl_vs_barrier", "float *out"), ("exit_then_split", "float *out"), ("divergent_barrier", "float *out"),
    ("mismatched", "unsigned *out"), ("not_in_mask", "float *out"), ("trap", "float *out"),
    ("overrun", "float *out"), ("early_exit_barrier", "float *out"),
])

SMALL = PRELUDE + r"""
__global__ void scan_warp(const float *x, float *out)
{
    extern __shared__ __align__(16) unsigned char n2c_dynamic_smem[];
    float *buf = reinterpret_cast<float *>(n2c_dynamic_smem);
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    float sc = x[t];
    for (unsigned d = 1; d < 32; d <<= 1) {
        float u = __shfl_up_sync(0xffffffffu, sc, d);
        if ((threadIdx.x & 31) >= d) sc += u;
    }
    buf[threadIdx.x] = sc;
    __syncthreads();
    out[t] = buf[threadIdx.x ^ 1];
}
""" + launcher("scan_warp", "const float *x, float *out")


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cpu_cache")
    jobs = {
        "main": dict(cu_text=MAIN, name="main"),
        "faults": dict(cu_text=FAULTS, name="faults"),
        "ucontext": dict(cu_text=SMALL, name="small", extra_flags=["-DN2C_CPU_UCONTEXT"]),
        "twin": dict(cu_text=PRELUDE + STATIC_SHARED + launcher("static_shared", "int *out, int *stale, unsigned *never"),
                     name="twin"),
    }
    with ThreadPoolExecutor(len(jobs)) as pool:
        futs = {k: pool.submit(cpurun.compile_cpu, cache_dir=cache, **kw) for k, kw in jobs.items()}
        out = {k: f.result() for k, f in futs.items()}
    out["cache"] = cache
    return out


@pytest.fixture
def main(libs):
    cpurun.set_poison(libs["main"], 0xFF)
    return libs["main"]


def run(lib, name, grid, block, shmem, *args, argtypes=None):
    return cpurun.launch(lib, name, grid, block, shmem, *args, argtypes=argtypes)


# ---------------------------------------------------------------------------------------------
def test_tree_reduction_with_dynamic_shared(main):
    n = 1000
    x = (np.arange(n) % 7).astype(np.float32)
    out = np.full(4, np.nan, np.float32)
    run(main, "block_sum", 4, 256, 256 * 4, x, n, out, argtypes=[None, i64, None])
    np.testing.assert_array_equal(out, [x[i * 256:(i + 1) * 256].sum() for i in range(4)])


def test_dynamic_shared_limit_needs_func_attribute(main):
    n = 64
    x = np.ones(n, np.float32)
    out = np.zeros(1, np.float32)
    with pytest.raises(CpuLaunchError) as e:  # > 48 KiB without cudaFuncSetAttribute
        run(main, "block_sum", 1, 64, 64 << 10, x, n, out, argtypes=[None, i64, None])
    assert e.value.code == 9 and "cudaFuncSetAttribute" in e.value.message
    run(main, "block_sum_big", 1, 64, 200 << 10, x, n, out, argtypes=[None, i64, None])
    assert out[0] == 64
    with pytest.raises(CpuLaunchError) as e:  # beyond the device's 227 KiB
        run(main, "block_sum_big", 1, 64, 240 << 10, x, n, out, argtypes=[None, i64, None])
    assert e.value.code == 1


def test_static_shared_is_per_block_and_poisoned(main):
    blocks = 3
    out, stale = np.zeros(blocks * 64, np.int32), np.zeros(blocks * 64, np.int32)
    never = np.zeros(blocks * 4, np.uint32)
    assert cpurun.static_poison_supported(main)
    run(main, "static_shared", blocks, 64, 0, out, stale, never)
    t = np.arange(64)
    expect = np.concatenate([b * 1000 + (t + 1) % 64 for b in range(blocks)])
    np.testing.assert_array_equal(out, expect)
    np.testing.assert_array_equal(stale, -1)  # block b never sees block b-1's tile
    np.testing.assert_array_equal(never, 0xFFFFFFFF)
    assert np.isnan(never.view(np.float32)).all()
    cpurun.set_poison(main, 0x5A)
    run(main, "static_shared", blocks, 64, 0, out, stale, never)
    np.testing.assert_array_equal(stale, 0x5A5A5A5A)
    np.testing.assert_array_equal(never, 0x5A5A5A5A)


def test_dynamic_shared_poisoned_each_block(main):
    nbytes, blocks = 100, 2
    out = np.zeros(blocks * nbytes, np.uint8)
    size = np.zeros(blocks, np.uint32)
    run(main, "dyn_dump", blocks, 32, nbytes, out, size)
    np.testing.assert_array_equal(size, nbytes)
    np.testing.assert_array_equal(out, 0xFF)  # block 1 does not see block 0's 7s


def test_uninitialised_shared_read_changes_with_poison(main):
    a = np.zeros(64, np.float32)
    b = np.zeros(64, np.float32)
    run(main, "uninit_read", 2, 32, 0, a)
    cpurun.set_poison(main, 0x00)
    run(main, "uninit_read", 2, 32, 0, b)
    even = np.arange(64) % 2 == 0
    np.testing.assert_array_equal(a[even], -3.0)  # 1 + floordiv(-7, 2)
    assert np.isnan(a[~even]).all() and (b[~even] == -4.0).all()  # the two runs disagree: caught


def test_syncthreads_count_and_or(main):
    p = np.zeros((3, 64), np.int32)
    p[0] = 1
    p[2, [3, 17, 40]] = 5
    out = np.zeros((3, 64, 3), np.int32)
    run(main, "sync_reduce", 3, 64, 0, p, out)
    np.testing.assert_array_equal(out[0], [[64, 1, 1]] * 64)
    np.testing.assert_array_equal(out[1], [[0, 0, 0]] * 64)
    np.testing.assert_array_equal(out[2], [[3, 0, 1]] * 64)


def shfl_ref(v, mode, b, width=32, nt=None):
    """CUDA programming-guide shuffle semantics per 32-lane warp of nt-thread blocks.

    A source lane past the end of the block (partial warp) yields the own value.
    """
    v = np.asarray(v)
    nt = nt or len(v)
    out = v.copy()
    for t in range(len(v)):
        local, lane = t % nt, t % 32
        bb = int(b[t]) if np.ndim(b) else b
        seg = lane - lane % width
        if mode == "idx":
            src = seg + bb % width
        elif mode == "up":
            src = lane - bb if lane - bb >= seg else lane
        elif mode == "down":
            src = lane + bb if lane + bb < seg + width else lane
        else:
            src = lane ^ bb if (lane ^ bb) < seg + width else lane
        if local - lane + src < nt:
            out[t] = v[t - lane + src]
    return out


def test_warp_shuffles(main):
    nt, nb = 64, 2
    n = nt * nb
    x = (np.arange(n) * 3 % 11).astype(np.float32)
    outs = [np.zeros(n, np.float32) for _ in range(5)]
    dxor, lidx = np.zeros(n, np.float64), np.zeros(n, np.int64)
    run(main, "shuffles", nb, nt, 0, x, *outs, dxor, lidx, 37, argtypes=[None] * 8 + [i32])
    down, bfly, scan, bcast, seg8 = outs
    s = x.copy()
    for off in (16, 8, 4, 2, 1):
        s = s + shfl_ref(s, "down", off)
    np.testing.assert_array_equal(down, s)
    warp_sums = x.reshape(-1, 32).sum(1)
    np.testing.assert_array_equal(bfly, np.repeat(warp_sums, 32))
    np.testing.assert_array_equal(scan, np.concatenate([np.cumsum(w) for w in x.reshape(-1, 32)]))
    np.testing.assert_array_equal(bcast, shfl_ref(x, "idx", 37))  # 37 % 32 == lane 5
    np.testing.assert_array_equal(seg8, shfl_ref(x, "down", 3, 8))
    np.testing.assert_array_equal(dxor, shfl_ref(x.astype(np.float64) * 0.5, "xor", 5))
    t = np.arange(n)
    np.testing.assert_array_equal(lidx, shfl_ref(t.astype(np.int64) << 33, "idx", (t % nt) + 7, 16))


def test_partial_warp_and_exited_lanes_read_own_value(main):
    # 48 threads: warp 1 has 16 lanes; a full-mask shuffle from a missing/exited lane yields the own value.
    x = np.arange(48, dtype=np.float32)
    outs = [np.zeros(48, np.float32) for _ in range(5)]
    dxor, lidx = np.zeros(48), np.zeros(48, np.int64)
    run(main, "shuffles", 1, 48, 0, x, *outs, dxor, lidx, 20, argtypes=[None] * 8 + [i32])
    expect = x.copy()
    expect[:32] = 20
    expect[32:] = x[32:]  # lane 20 of warp 1 does not exist
    np.testing.assert_array_equal(outs[3], expect)
    out = np.full(32, -1, np.float32)
    run(main, "exited_then_shfl", 1, 32, 0, out)
    np.testing.assert_array_equal(out[:16], np.arange(16))  # lanes 16..31 exited: own value
    assert (out[16:] == -1).all()


def test_votes_ballot_activemask_match(main):
    nt = 64
    p = np.arange(nt, dtype=np.int32) * 7 % 13
    p[32:40] += 1000
    outs = [np.zeros(nt, dt) for dt in (np.uint32, np.int32, np.int32, np.int32, np.uint32, np.uint32,
                                          np.uint32, np.int32, np.uint32)]
    run(main, "votes", 1, nt, 0, p, *outs)
    ballot, all_, any_, uni, amask, many, mall, mpred, half = outs
    for w in range(2):
        lanes = slice(32 * w, 32 * w + 32)
        bits = p[lanes] & 1
        b = sum(int(v) << k for k, v in enumerate(bits))
        assert (ballot[lanes] == b).all()
        assert (all_[lanes] == int(bits.all())).all() and (any_[lanes] == int(bits.any())).all()
        assert (uni[lanes] == int(bits.all() or not bits.any())).all()
        am = sum(1 << k for k in range(32) if (32 * w + k) % 3 == 0)
        assert (amask[lanes] == np.where(np.arange(32 * w, 32 * w + 32) % 3 == 0, am, 0)).all()
        for k in range(32):
            assert many[32 * w + k] == sum(1 << j for j in range(32) if p[32 * w + j] % 4 == p[32 * w + k] % 4)
        hb = b & 0xFFFF
        assert (half[lanes] == np.r_[[hb] * 16, [0] * 16]).all()
    np.testing.assert_array_equal(mall[:32], 0xFFFFFFFF)  # warp 0: all v/1000 == 0
    np.testing.assert_array_equal(mpred[:32], 1)
    np.testing.assert_array_equal(mall[32:], 0)
    np.testing.assert_array_equal(mpred[32:], 0)


def test_atomics_all_kinds(main):
    nb, nt = 2, 96
    n = nb * nt
    i32_ = np.array([5, 0, -3, 4, -1, 0, 0, 123, 0, 0], np.int32)
    u32_ = np.array([0, 0, 0, 9, 10, 0, 1000], np.uint32)
    u64 = np.zeros(4, np.uint64)
    f32_, f64 = np.array([1.0, 0.0], np.float32), np.zeros(1)
    i64_ = np.array([-(10**15), 0], np.int64)
    olds, u16 = np.zeros(n, np.int32), np.zeros(1, np.uint16)
    run(main, "atomics", nb, nt, 0, i32_, u32_, u64, f32_, f64, i64_, olds, u16)
    t = np.arange(n)
    xor = 0
    for v in t:
        xor ^= int(v)
    wrap = np.array([n * 2147483647 % 2**32], np.uint64).astype(np.uint32).view(np.int32)[0]
    assert list(i32_) == [5 + n, -2 * n, n - 1, -(n - 1), np.int32(-2**31), 0x7FFFFFFF, xor, i32_[7], 2 * n, wrap]
    assert sorted(list(olds) + [i32_[7]]) == sorted([123] + list(range(n)))
    inc, dec, inc5 = 0, 0, 9
    for _ in range(n):
        inc = 0 if inc >= 9 else inc + 1
        dec = 7 if dec == 0 or dec > 7 else dec - 1
        inc5 = 0 if inc5 >= 5 else inc5 + 1
    assert list(u32_) == [3 * n, inc, dec, inc5, (10 - n) % 2**32, n - 1, 5]
    assert u32_[1] == n % 10  # atomicInc wraps at val
    assert list(u64[:3]) == [n << 33, (n - 1) << 40, 2**64 - 1]
    assert 100 <= u64[3] < 100 + n  # exactly one atomicCAS succeeded
    assert f32_[0] == 1.0 + 0.5 * n and f32_[1] == 2.0 and f64[0] == 0.25 * n
    assert list(i64_) == [0, -(10**12)]
    assert 7 <= u16[0] < 7 + n


def test_3d_ids_and_lanes(main):
    grid, block = (2, 3, 2), (8, 3, 2)
    nb, nt = 12, 48
    out = np.zeros((nb * nt, 8), np.uint32)
    run(main, "ids3d", grid, block, 0, out)
    rows = []
    for bz in range(2):
        for by in range(3):
            for bx in range(2):
                for tz in range(2):
                    for ty in range(3):
                        for tx in range(8):
                            lt = tx + 8 * (ty + 3 * tz)
                            rows.append([tx, ty, tz, bx, by, bz, lt - lt % 32, 32])
    np.testing.assert_array_equal(out, np.array(rows, np.uint32))


def test_printf(main, capfd):
    run(main, "hello", 2, 4, 0, 7, argtypes=[i32])
    lines = capfd.readouterr().out.splitlines()
    assert lines == [f"hello from block {b} thread {t} base 7 w=0.587" for b in (0, 1) for t in (0, 1)]


@pytest.mark.parametrize("shape", [(1, 1, 1), (16, 16, 16), (67, 45, 33)])
def test_templated_matmul_bit_identical(main, shape):
    m, k, n = shape
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    ref = np.zeros((m, n), np.float32)
    for j in range(k):  # same accumulation order as the kernel, no FMA
        ref = ref + np.outer(a[:, j], b[j]).astype(np.float32)
    types = [None, i64, i64, None, i64, None, i32]
    for name, tw in (("matmul16", 16), ("matmul8", 8)):
        c = np.full((m, n), np.nan, np.float32)
        run(main, name, ((n + tw - 1) // tw, (m + tw - 1) // tw), (tw, tw), 0, a, m, k, b, n, c, tw, argtypes=types)
        np.testing.assert_array_equal(c, ref)


# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kernel, block, needle", [
    ("shfl_vs_barrier", 32, "deadlock"),
    ("exit_then_split", 32, "deadlock"),
    ("divergent_barrier", 32, "divergent barrier"),
    ("mismatched", 32, "mismatched warp collectives"),
    ("not_in_mask", 32, "excludes itself"),
    ("trap", 32, "__trap()"),
    ("overrun", 32, "wrote past the 64 bytes"),
])
def test_faults_are_reported_not_hung(libs, kernel, block, needle):
    out = np.zeros(block, np.float32)
    t0 = time.perf_counter()
    with pytest.raises(CpuLaunchError) as e:
        run(libs["faults"], kernel, 2, block, 64, out)
    assert time.perf_counter() - t0 < 2.0
    assert e.value.code == 719 and needle in e.value.message, e.value.message


def test_deadlock_message_names_waiters(libs):
    with pytest.raises(CpuLaunchError) as e:
        run(libs["faults"], "shfl_vs_barrier", 1, 64, 0, np.zeros(64, np.float32))
    msg = e.value.message
    assert "__shfl_sync(mask 0xffffffff)" in msg and "threads 0-15 32-47" in msg
    assert "__syncthreads" in msg and "threads 16-31 48-63" in msg
    assert msg.count("\n") == 2, msg  # one line per kind of wait


def test_exited_threads_do_not_block_barrier_and_runtime_recovers(libs):
    out = np.zeros(64, np.float32)
    run(libs["faults"], "early_exit_barrier", 1, 64, 0, out)  # also: a launch after failures works
    np.testing.assert_array_equal(out, np.r_[[3.0] * 40, [0.0] * 24])


@pytest.mark.parametrize("grid, block, shmem", [
    (1, 1025, 0), ((1, 1, 1), (32, 32, 2), 0), (0, 32, 0), (1, (1, 1, 65), 0), ((1, 70000), 32, 0),
])
def test_invalid_configurations(main, grid, block, shmem):
    with pytest.raises(CpuLaunchError) as e:
        run(main, "hello", grid, block, shmem, 0, argtypes=[i32])
    assert e.value.code == 9


# ---------------------------------------------------------------------------------------------
def test_ucontext_fallback(libs):
    x = np.arange(128, dtype=np.float32) % 5
    out = np.zeros(128, np.float32)
    run(libs["ucontext"], "scan_warp", 2, 64, 256, x, out)
    scan = np.concatenate([np.cumsum(w) for w in x.reshape(-1, 32)])
    np.testing.assert_array_equal(out, scan[np.arange(128) ^ 1])


def test_two_libraries_with_same_kernel_stay_separate(libs):
    a, b = libs["main"], libs["twin"]  # both define static_shared and its __shared__ statics
    assert a._name != b._name
    cpurun.set_poison(a, 0x11)
    cpurun.set_poison(b, 0x22)
    for lib, byte in ((a, 0x11), (b, 0x22), (a, 0x11)):
        out, stale = np.zeros(128, np.int32), np.zeros(128, np.int32)
        run(lib, "static_shared", 2, 64, 0, out, stale, np.zeros(8, np.uint32))
        assert (stale == np.int32(np.uint32(byte * 0x01010101))).all()
    cpurun.set_poison(a, 0xFF)


def test_concurrent_launches_from_threads(main):
    n = 256 * 64
    x = (np.arange(n) % 5).astype(np.float32)
    results, errors = {}, []

    def work(k):
        try:
            # A fresh OS thread: its own shared memory, found and poisoned on the first launch.
            out, stale = np.zeros(64, np.int32), np.zeros(64, np.int32)
            run(main, "static_shared", 1, 64, 0, out, stale, np.zeros(4, np.uint32))
            assert (stale == -1).all() and cpurun.static_poison_supported(main)
            out = np.zeros(64, np.float32)
            for _ in range(3):
                run(main, "block_sum", 64, 256, 1024, x, n, out, argtypes=[None, i64, None])
            results[k] = out
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    expect = x.reshape(64, 256).sum(1)
    for out in results.values():
        np.testing.assert_array_equal(out, expect)


def test_cache_hit_and_build_error(libs, monkeypatch, tmp_path):
    t0 = time.perf_counter()
    again = cpurun.compile_cpu(MAIN, name="main", cache_dir=libs["cache"])
    assert time.perf_counter() - t0 < 0.5 and again._name == libs["main"]._name
    monkeypatch.setenv("NUMBA2CUDA_CACHE", str(tmp_path))
    bad = PRELUDE + "__global__ void k(float *x) { x[0] = undefined_thing; }\n" + launcher("k", "float *x")
    with pytest.raises(cpurun.CpuBuildError) as e:
        cpurun.compile_cpu(bad, name="broken")
    assert "broken.cu:" in e.value.output and "undefined_thing" in e.value.output
    assert not any((tmp_path / "cpu").glob("broken-*"))  # failed builds are not published


def test_launch_argument_checks(main):
    with pytest.raises(TypeError, match="explicit ctypes type"):
        run(main, "hello", 1, 1, 0, 3)
    with pytest.raises(ValueError, match="array must be contiguous"):  # C or F order: the typed launch chose
        run(main, "uninit_read", 1, 32, 0, np.zeros((8, 8), np.float32)[:, ::2])
    run(main, "hello", 1, 1, 0, np.int32(3))  # numpy scalars carry their type


def test_header_is_warning_free(tmp_path):
    src = tmp_path / "w.cu"
    src.write_text(MAIN)
    cmd = ["g++", "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-fPIC", "-x", "c++", "-include",
           str(cpurun.HEADER), "-c", str(src), "-o", str(tmp_path / "w.o")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
