# expect: 12:16: call to mul(): 'mul' is a foreign device function (cuda.declare_device)
"""Calls a CUDA C function declared with cuda.declare_device and linked from a .cu file."""
from numba import cuda

mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link="functions.cu")


@cuda.jit("void(float32[::1], float32[::1], float32[::1])")
def multiply(r, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = mul(x[i], y[i])
