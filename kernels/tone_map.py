"""Tone mapping an HDR image with helpers written as plain @numba.jit CPU functions, called from the kernel.

numba-cuda compiles a CPU ``@numba.jit`` / ``@njit`` function that a kernel calls as a device function,
typed by the call's arguments (its CPU signature and options play no part), so one helper written for
the CPU serves both. Here ``luminance`` and ``smoothstep`` are such helpers; ``smoothstep`` is called with
float32 arguments for the image and with float64 ones for the exposure curve, so it is compiled twice.

Each pixel: the luminance of its RGB, a Reinhard curve on the exposed luminance, a smoothstep shoulder,
and the colour scaled by the new luminance over the old.

Launch:  ``tone_map[(ceil(w / 16), ceil(h / 16)), (16, 16)](hdr, exposure, out)``
"""
import math

import numba
import numpy as np
from numba import cuda, float32, njit


@njit
def luminance(r, g, b):
    return float32(0.2126) * r + float32(0.7152) * g + float32(0.0722) * b


@numba.jit(nopython=True, cache=False)
def smoothstep(edge0, edge1, x):
    t = min(max((x - edge0) / (edge1 - edge0), 0.0), 1.0)
    return t * t * (3.0 - 2.0 * t)


@cuda.jit("void(float32[:, :, ::1], float64, float32[:, :, ::1])")
def tone_map(hdr, exposure, out):
    x, y = cuda.grid(2)
    h, w = hdr.shape[0], hdr.shape[1]
    if y < h and x < w:
        r, g, b = hdr[y, x, 0], hdr[y, x, 1], hdr[y, x, 2]
        lum = luminance(r, g, b)
        scaled = lum * float32(exposure)
        mapped = scaled / (float32(1.0) + scaled)
        shoulder = smoothstep(float32(0.6), float32(1.0), mapped)
        lift = smoothstep(0.0, 4.0, exposure)
        new_lum = float32(mapped * (1.0 - 0.25 * shoulder) + 0.01 * lift)
        ratio = new_lum / lum if lum > float32(0.0) else float32(0.0)
        out[y, x, 0] = r * ratio
        out[y, x, 1] = g * ratio
        out[y, x, 2] = b * ratio


def reference(hdr, exposure):
    """NumPy with the kernel's types: float32 image arithmetic, the smoothstep of a float32 in float64
    (its 0.0, 1.0 and 3.0 are float64 constants in Numba), the exposure curve in float64."""
    f32 = np.float32
    r, g, b = hdr[..., 0], hdr[..., 1], hdr[..., 2]
    lum = f32(0.2126) * r + f32(0.7152) * g + f32(0.0722) * b
    scaled = lum * f32(exposure)
    mapped = scaled / (f32(1.0) + scaled)

    def smoothstep(e0, e1, v):
        t = np.minimum(np.maximum(np.float64((v - e0) / (e1 - e0)), 0.0), 1.0)
        return t * t * (3.0 - 2.0 * t)

    shoulder = smoothstep(f32(0.6), f32(1.0), mapped)
    lift = smoothstep(0.0, 4.0, exposure)
    new_lum = (mapped * (1.0 - 0.25 * shoulder) + 0.01 * lift).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(lum > 0, new_lum / lum, f32(0.0)).astype(np.float32)
    return (hdr * ratio[..., None]).astype(np.float32)


# The sizes `numba2cuda verify` sweeps: partial blocks, one pixel.
VERIFY_SIZES = ("small", 1, 15, 17, 67)

# "bench": a 4096 x 4096 image; 1024: a size a program tone-maps many times.
BENCH_SIZES = ("bench", 1024)


def example(rng, size="small"):
    """One run: inputs, launch configuration and the expected outputs.

    size: "small" (19 x 23), "bench" (4096 x 4096) or an int n (n x (n + 1)).
    """
    h, w = {"small": (19, 23), "bench": (4096, 4096)}[size] if isinstance(size, str) else (int(size), int(size) + 1)
    hdr = (rng.random((h, w, 3), dtype=np.float32) * 8.0).astype(np.float32)
    hdr[0, 0] = 0.0  # a black pixel: ratio 0
    exposure = 1.5
    out = np.zeros_like(hdr)
    block = (16, 16)
    # fused multiply-adds on the GPU round the luminance once where NumPy rounds twice
    return dict(kernel=tone_map, griddim=(math.ceil(w / 16), math.ceil(h / 16)), blockdim=block, shared=0,
                args=[hdr, exposure, out], expected={2: reference(hdr, exposure)}, rtol=1e-5, atol=1e-6,
                bytes=2 * hdr.nbytes)
