# expect: 11:18: call to smoothstep(): 'smoothstep' is defined nowhere in this file (Python stops here with a NameError)
"""Calls a device function by a name the module never defines (it was renamed, or lives in a notebook cell not
saved with the file)."""
from numba import cuda


@cuda.jit("void(float64[::1], float64[::1])")
def ramp(out, x):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = smoothstep(x[i])
