# expect: 26:20: call to twice(): 'twice' is made for Numba with numba.extending's @type_callable and @lower_builtin (line 12): its LLVM IR is written by hand, and numba2cuda does not translate LLVM IR
"""numba-cuda's external_add: a function Numba learns through the low-level extension API (a typing template and
an LLVM lowering), here made in a test method. It was "is not supported in kernels", as if Numba could not call it."""
from numba import cuda, types
from numba.cuda.extending import lower_builtin, type_callable


def test_twice():
    def twice(x):
        return 2 * x

    @type_callable(twice)
    def type_twice(context):
        def typer(x):
            return types.int32 if x == types.int32 else None
        return typer

    @lower_builtin(twice, types.int32)
    def lower_twice(context, builder, sig, args):
        return builder.add(args[0], args[0])

    @cuda.jit("void(int32[::1])")
    def k(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] = twice(a[i])
