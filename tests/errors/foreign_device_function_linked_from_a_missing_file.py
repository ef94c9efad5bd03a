# expect: 5:76: link 'functions.cu': no such file (a relative path is looked for next to the module, then in the working folder)
"""Calls a CUDA C function declared with cuda.declare_device, linked from a .cu file that is not there."""
from numba import cuda

mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link="functions.cu")


@cuda.jit("void(float32[::1], float32[::1], float32[::1])")
def multiply(r, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = mul(x[i], y[i])
