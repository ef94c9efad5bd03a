"""The lecture's hand-written CUDA C tiled matmul, `template <int TW>` chosen by a switch: the bar to match."""

from __future__ import annotations

CUDA_SOURCE = r"""
#include <torch/types.h>
#include <cuda_runtime.h>

template <int TW>
__global__ void matmul_k(const float *m, const float *n, float *out, int h, int w, int k)
{
    int tc = threadIdx.x, tr = threadIdx.y;
    int r = blockIdx.y * blockDim.y + tr, c = blockIdx.x * blockDim.x + tc;
    extern __shared__ float ms[];
    float *ns = &ms[TW * TW];
    float p = 0.0f;
    for (int ph = 0; ph < (k + TW - 1) / TW; ++ph) {
        int idx = ph * TW;
        ms[tr * TW + tc] = r < h && idx + tc < k ? m[tc + idx + r * k] : 0.0f;
        ns[tr * TW + tc] = c < w && idx + tr < k ? n[(tr + idx) * w + c] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TW; ++i)
            p += ms[tr * TW + i] * ns[TW * i + tc];
        __syncthreads();
    }
    if (r < h && c < w)
        out[r * w + c] = p;
}

torch::Tensor matmul_handwritten(torch::Tensor m, torch::Tensor n, int64_t tw)
{
    int h = m.size(0), w = n.size(1), k = m.size(1);
    auto out = torch::empty({h, w}, m.options());
    dim3 tpb(tw, tw), blocks((w + tw - 1) / tw, (h + tw - 1) / tw);
    size_t size = tw * tw * 2 * sizeof(float);
    cudaStream_t s = 0;
    switch (tw) {
    case 8: matmul_k<8><<<blocks, tpb, size, s>>>(m.data_ptr<float>(), n.data_ptr<float>(), out.data_ptr<float>(), h, w, k); break;
    case 16: matmul_k<16><<<blocks, tpb, size, s>>>(m.data_ptr<float>(), n.data_ptr<float>(), out.data_ptr<float>(), h, w, k); break;
    case 32: matmul_k<32><<<blocks, tpb, size, s>>>(m.data_ptr<float>(), n.data_ptr<float>(), out.data_ptr<float>(), h, w, k); break;
    default: TORCH_CHECK(false, "unsupported tile width ", tw);
    }
    return out;
}

__global__ void empty_k(float *a, const float *b, const float *c, int64_t n) {}

void empty_launch(torch::Tensor a, torch::Tensor b, torch::Tensor c)
{
    empty_k<<<1, 32>>>(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), a.numel());
}
"""

CPP_SOURCE = """
torch::Tensor matmul_handwritten(torch::Tensor m, torch::Tensor n, int64_t tw);
void empty_launch(torch::Tensor a, torch::Tensor b, torch::Tensor c);
"""


def load():
    from torch.utils.cpp_extension import load_inline

    return load_inline("n2c_handwritten_matmul", CPP_SOURCE, cuda_sources=CUDA_SOURCE,
                       functions=["matmul_handwritten", "empty_launch"], extra_cuda_cflags=["-O3"], verbose=False)
