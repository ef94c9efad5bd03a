"""numba-cuda's library as kernels call it (issue 17): cooperative groups, numba.cuda.random, complex numbers and
cmath, cuda.fp16, vectorize/guvectorize; translated and run on the CPU runtime against Numba or NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from translator import translate_source
from translator.runtime.cpu_launch import load_cpu
from translator.runtime.cpurun import CpuLaunchError

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


def test_grid_sync_is_a_cooperative_launch(grid_sync_module):
    cu = grid_sync_module.cu
    assert "#include <cooperative_groups.h>" in cu
    assert "cooperative_groups::this_grid().sync();  // <string>:" in cu
    assert "cudaLaunchCooperativeKernel(kernel, grid, block, args, shared_bytes, stream)" in cu
    assert "return n2c_launch_cooperative(sequential_rows, grid, block, args, shared_bytes, stream);" in cu


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


def test_a_block_that_never_reaches_the_grid_barrier_is_a_deadlock(grid_sync_module):
    with pytest.raises(CpuLaunchError, match=r"deadlock: .*this_grid\(\)\.sync\(\)"):
        grid_sync_module.early_exit[3, 32](np.zeros(96, np.int32))


def test_a_cooperative_grid_larger_than_the_device_holds_names_the_limit(grid_sync_module):
    n = 40000 * 64
    with pytest.raises(CpuLaunchError, match=r"cooperative launch of 40000 blocks exceeds the 4224 .*132 SMs x 32 "
                                             r"blocks of 64 threads"):
        grid_sync_module.heat[40000, 64](np.zeros(n), np.zeros(n), 1, 0.25)


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
