# expect: 5:74: link 'scale.ptx': numba2cuda carries CUDA C++ source (.cu); PTX, cubins and libraries are not translated
"""Links a foreign device function from PTX, which the translation cannot carry as CUDA C."""
from numba import cuda

mul = cuda.declare_device("scale_f32", "float32(float32, float32)", link="scale.ptx")


@cuda.jit("void(float32[::1], float32[::1])")
def scale(r, x):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = mul(x[i], 2.0)
