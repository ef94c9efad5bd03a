"""Complex powers: numba-cuda computes every one with its cpow (CPython's _Py_c_pow), a literal z ** 2 and
pow(z, 3) included (measured on the H200: z ** 2 is not z * z there), while NumPy, which the simulator runs,
multiplies for small integer exponents. verify's reference must compute numba-cuda's values, in both
complex precisions."""
import numpy as np
from numba import cuda


@cuda.jit("void(complex128[::1], complex128[::1], complex64[::1], complex128[:, ::1], complex64[:, ::1])")
def powers(z, y, w, out, out64):
    i = cuda.grid(1)
    if i < z.shape[0]:
        out[i, 0] = z[i] ** 2
        out[i, 1] = z[i] ** y[i]
        out[i, 2] = pow(z[i], 3)
        out[i, 3] = z[i] ** 0.5
        out64[i, 0] = w[i] ** 2
        out64[i, 1] = w[i] ** w[i]


def example(rng, size="small"):
    n = 200
    z = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    y = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    z[:3], y[:3] = [0j, 1j, -2.5 + 0j], [0j, 2 + 0j, 0.5 + 0j]
    w = z.astype(np.complex64)
    return dict(kernel=powers, griddim=2, blockdim=128, shared=0,
                args=[z, y, w, np.zeros((n, 4), np.complex128), np.zeros((n, 2), np.complex64)],
                expected={3: None, 4: None})
