# expect: 21:16: call to add_one(): 'add_one' is made for Numba with numba.extending's @intrinsic (line 7): its LLVM IR is written by hand, and numba2cuda does not translate LLVM IR
"""numba-cuda's @intrinsic tests: a function whose body returns a signature and an LLVM code generator."""
from numba import cuda, types
from numba.cuda.extending import intrinsic


@intrinsic
def add_one(typingctx, x):
    sig = types.int32(types.int32)

    def codegen(context, builder, signature, args):
        return builder.add(args[0], context.get_constant(types.int32, 1))

    return sig, codegen


@cuda.jit("void(int32[::1])")
def k(a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = add_one(a[i])
