# expect: 12:16: call to hit(): it comes from optics_n2c_absent.geometry, which numba2cuda does not read
# expect: 20:32: tuple unpacking: the right side is not a tuple
"""Propagates a ray through a device function that calls a geometry module numba2cuda cannot read (not next to
this file). Only the tuple unpacking of the device function's result was reported, the reason it fails second."""
import optics_n2c_absent.geometry as geometry
from numba import cuda


@cuda.jit(device=True)
def step(x, y):
    # the geometry module's function returns a point and a time
    point, t = geometry.hit((x, y))
    return point, t


@cuda.jit("void(float64[:, ::1])")
def trace(rays):
    i = cuda.grid(1)
    point, t = step(rays[i, 0], rays[i, 1])
    (rays[i, 0], rays[i, 1]) = point
