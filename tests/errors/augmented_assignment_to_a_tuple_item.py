# expect: 11:5: augmented assignment to a tuple item: 'tpb' is a tuple, and a tuple's items cannot be assigned
"""Widens a module-level block shape in place to pad a shared tile (a transpose without bank conflicts)."""
from numba import cuda, float32

tpb = (32, 32)


@cuda.jit("void(float32[:, ::1], float32[:, ::1])")
def transpose(a, out):
    x, y = cuda.grid(2)
    tpb[1] += 1
    tile = cuda.shared.array(tpb, float32)
    tile[cuda.threadIdx.x, cuda.threadIdx.y] = a[x, y]
    cuda.syncthreads()
    out[y, x] = tile[cuda.threadIdx.x, cuda.threadIdx.y]
