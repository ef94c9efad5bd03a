"""Python integer semantics inside a kernel: what a C translation easily gets wrong.

For each pair (a[i], b[i]) of int64 values, negatives included:

* ``//`` floors toward minus infinity (``-7 // 2 == -4``; C gives -3);
* ``%`` takes the sign of the divisor (``-7 % 2 == 1``; C gives -1);
* ``/`` between integers is true division and gives a float64 (``-7 / 2 == -3.5``);
* ``range`` with a negative step counts down and may be empty;
* the loop variable keeps the *last value it took* after the loop (not one step past it,
  as a C ``for`` leaves it), and is untouched when the loop does not run at all.

Launch:  ``index_math[math.ceil(n / 32), 32](a, b, iout, fout)``
"""
import math

import numpy as np
from numba import cuda

NI = 6                             # integer results per element
NF = 2                             # float results per element


@cuda.jit("void(int64[::1], int64[::1], int64[:, ::1], float64[:, ::1])")
def index_math(a, b, iout, fout):
    i = cuda.grid(1)
    if i < a.shape[0]:
        x = a[i]
        y = b[i]
        iout[i, 0] = x // y
        iout[i, 1] = x % y
        iout[i, 2] = (x - 5) // 3 + (x - 5) % 3 * 100   # constant divisor, shifted value
        fout[i, 0] = x / y
        fout[i, 1] = (x - 3) / 4
        # count down from x in steps of 3 while above y: empty when x <= y
        j = -1000
        total = 0
        steps = 0
        for j in range(x, y, -3):
            total += j
            steps += 1
        iout[i, 3] = total
        iout[i, 4] = steps
        iout[i, 5] = j             # last value taken, or -1000 if the loop never ran


def reference(a, b):
    """NumPy reference: returns (iout, fout).  NumPy's // and % also floor."""
    x, y = a.astype(np.int64), b.astype(np.int64)
    # range(x, y, -3) takes ceil((x - y) / 3) steps when x > y, none otherwise
    steps = np.where(x > y, (x - y + 2) // 3, 0)
    total = steps * x - 3 * (steps * (steps - 1) // 2)
    last = np.where(steps > 0, x - 3 * (steps - 1), -1000)
    iout = np.stack([x // y, x % y, (x - 5) // 3 + (x - 5) % 3 * 100,
                     total, steps, last], axis=1)
    fout = np.stack([x / y, (x - 3) / 4], axis=1)
    return np.ascontiguousarray(iout), np.ascontiguousarray(fout)


# The sizes `numba2cuda verify` sweeps (block-1, block+1, primes, 1).
VERIFY_SIZES = ("small", 1, 31, 33, 67, 97)


# The sizes `numba2cuda bench` times: "bench", where device time dominates, and a size a program
# launches many times, where the host cost of a launch is as large as the kernel.
BENCH_SIZES = ("bench", 1 << 20)


def example(rng, size="small"):
    """One run: inputs, launch configuration and the expected outputs.

    size: "small" (50 elements), "bench" (2**24) or an int n.
    """
    n = {"small": 50, "bench": 1 << 24}[size] if isinstance(size, str) else int(size)
    a = rng.integers(-20, 21, size=n, dtype=np.int64)
    b = rng.integers(1, 8, size=n, dtype=np.int64) * rng.choice(np.array([-1, 1]), size=n)
    b = b.astype(np.int64)
    iout = np.zeros((n, NI), dtype=np.int64)
    fout = np.zeros((n, NF), dtype=np.float64)
    ie, fe = reference(a, b)
    return dict(kernel=index_math, griddim=math.ceil(n / 32), blockdim=32, shared=0,
                args=[a, b, iout, fout], expected={2: ie, 3: fe}, rtol=0, atol=0,
                bytes=a.nbytes + b.nbytes + iout.nbytes + fout.nbytes)
