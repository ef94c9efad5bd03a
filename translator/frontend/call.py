"""libcst calls -> KernelIR: intrinsics, atomics, cuda.grid (casts and builtins: builtins.py; device functions:
devcalls.py; NumPy's reductions: reductions.py; the reason for a call it does not translate: unknowncalls.py)."""

from __future__ import annotations

import libcst as cst

from ..ir import intrinsics
from ..ir import nodes as ir
from ..ir import typesys as T
from ..errors import Reported, Unsupported
from ..ir.facts import mark_written, root_array
from .names import dotted, resolve, scalar_type_of_name
from .overloads import method_function
from .builtins import BuiltinLowerer
from .reductions import METHODS as REDUCTION_METHODS, REDUCTIONS, ReductionLowerer
from .unknowncalls import UnknownCallee
from .expr import GridGroup, GridSync, TupleValue, TypeValue, canonical_call, const_expr

# Element types CUDA's own atomic functions take directly (others go through an n2c helper).
NATIVE_ATOMICS = {
    "add": ("atomicAdd", {"int32", "uint32", "float32", "float64"}),
    "sub": ("atomicSub", {"int32", "uint32"}),
    "max": ("atomicMax", {"int32", "uint32"}),
    "min": ("atomicMin", {"int32", "uint32"}),
    "and_": ("atomicAnd", {"int32", "uint32"}),
    "or_": ("atomicOr", {"int32", "uint32"}),
    "xor": ("atomicXor", {"int32", "uint32"}),
    "exch": ("atomicExch", {"int32", "uint32", "float32"}),
    "inc": ("atomicInc", {"uint32"}),
    "dec": ("atomicDec", {"uint32"}),
    "cas": ("atomicCAS", {"int32", "uint32"}),
}
HELPER_DEPENDENCIES = {"atomic_max": {"atomic_cas_bits"}, "atomic_min": {"atomic_cas_bits"}, "cmath": {"complex"},
                       "round_ndigits": {"py_round", "ipow"}, "complex_part": {"complex"}}


class CallLowerer(BuiltinLowerer, ReductionLowerer, UnknownCallee):
    """Mixed into the expression lowerer; every call in a kernel body comes through lower_Call."""

    def lower_Call(self, node: cst.Call):
        for a in node.args:
            if a.star:
                raise Unsupported(a, "*args in a call", "arguments must be passed one by one")
        if isinstance(node.func, cst.Lambda):
            raise Unsupported(node.func, "lambda called where it is made", "numba2cuda translates a lambda the kernel "
                              "binds to a name, as a function of the kernel", "bind it first: f = lambda v: ...; f(x)")
        args = [a.value for a in node.args if a.keyword is None]
        kwargs = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        if isinstance(node.func, cst.Name) and node.func.value in self.info.functions \
                and node.func.value not in self.scope and node.func.value not in self.scalar_names:
            return self.device_call(node, node.func.value, args, kwargs)
        if isinstance(node.func, cst.Attribute) and dotted(node.func) in self.info.functions:  # helpers.f()
            return self.device_call(node, dotted(node.func), args, kwargs)
        head = node.func
        while isinstance(head, cst.Attribute):
            head = head.value
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "conjugate" \
                and resolve(self.info, node.func) is None:
            if args or kwargs:
                raise Unsupported(node, "conjugate()", "takes no arguments")
            self.use_helper("complex")
            return ir.Call(intrinsics.lookup("np.conjugate"), [self.expr(node.func.value)])
        in_scope = isinstance(head, cst.Name) and head.value in self.scope
        if in_scope and isinstance(node.func, cst.Attribute) and method_function(node.func.attr.value) in \
                self.info.functions and isinstance(self.value(node.func.value), ir.ArrayVar):
            # `a.foo(...)` of numba.extending's @overload_method(types.Array, "foo"): its implementation, array first
            return self.device_call(node, method_function(node.func.attr.value), [node.func.value] + args, kwargs)
        if in_scope:
            self.value(head)  # a name whose definition already failed is not reported twice
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in REDUCTION_METHODS and not args and \
                (in_scope or isinstance(node.func.value, cst.Subscript)) and \
                isinstance(self.value(node.func.value), ir.ArrayVar):  # a.sum(), m[i].mean()
            return self.reduction(node, node.func.attr.value, [node.func.value], kwargs)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "reshape" and \
                (in_scope or isinstance(node.func.value, cst.Subscript)) and \
                isinstance(self.value(node.func.value), ir.ArrayVar):  # arr.reshape(3, 2)
            return self.reshaped(self.value(node.func.value), node, args, kwargs)
        if in_scope or (isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Call)):
            func = self.value(node.func)  # a method of a translation-time object: g.sync(), this_grid().sync()
            if isinstance(func, TypeValue):  # x.dtype.type(v), dt(v) with dt = x.dtype
                return self.cast(node, func.scalar, args, kwargs)
            if isinstance(func, GridSync):
                return self.grid_sync(node, args, kwargs)
        if isinstance(node.func, cst.Name) and node.func.value in self.info.failed_functions:
            self.info.report_deferred(self.info.failed_functions[node.func.value])  # its definition's problem
            raise Reported(node.func.value)
        if isinstance(node.func, cst.Name) and node.func.value not in self.scope:
            made_by = self.info.value_nodes.get(node.func.value)
            if isinstance(made_by, cst.Call) and resolve(self.info, made_by.func) == "cuda.declare_device":
                return self.foreign_call(node, made_by, args, kwargs)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "from_buffer" \
                and isinstance(node.func.value, cst.Name) and node.func.value.value not in self.scope:
            made_by = self.info.value_nodes.get(node.func.value.value)
            if isinstance(made_by, cst.Call) and resolve(self.info, made_by.func) == "cffi.FFI":
                return self.from_buffer(node, args, kwargs)
        canon = canonical_call(self.info, node.func)
        if canon is None and isinstance(node.func, cst.Attribute) and isinstance(head, (cst.Name, cst.Subscript)) \
                and isinstance(self.value(node.func.value), ir.ArrayVar):
            raise Unsupported(node.func, f"array method .{node.func.attr.value}()", "numba2cuda translates an "
                              "array's reductions (.sum(), .mean() ...) and no other method (a kernel's arrays are "
                              "pointers and extents)", "index the elements in a loop, or pass the array as the view "
                              "it needs")
        if canon is None:
            raise Unsupported(node.func, "call", "only functions of cuda, math, numpy and device functions can be called")
        scalar = scalar_type_of_name(canon)
        if scalar is not None:
            return self.cast(node, scalar, args, kwargs)
        handler = getattr(self, "call_" + canon.replace(".", "_"), None)
        if handler is not None:
            return handler(node, args, kwargs)
        if canon.startswith("np.") and canon[3:] in REDUCTIONS:
            return self.reduction(node, canon[3:], args, kwargs)
        if canon in intrinsics.OPERATOR_MODULE:
            return self.operator_call(node, canon, args, kwargs)
        if canon.startswith("cuda.atomic."):
            return self.atomic(node, canon.rsplit(".", 1)[1], args, kwargs)
        if canon.startswith("cuda.random."):
            return self.random_draw(node, canon, args, kwargs)
        entry = intrinsics.lookup(canon)
        if entry is None:
            raise self.unknown_callee(node, canon)
        if kwargs:
            raise Unsupported(node, f"keyword arguments to {canon}()", "pass them positionally")
        if not entry.nargs[0] <= len(args) <= entry.nargs[1]:
            raise Unsupported(node, f"{canon}()", f"takes {_arity(entry.nargs)} argument(s), got {len(args)}")
        if entry.helper and not callable(entry.helper):  # one the argument types pick is added where printed
            self.use_helper(entry.helper)
        return ir.Call(entry, [self.expr(a) for a in args])

    def operator_call(self, node, canon: str, args, kwargs):
        """`operator.add(a, b)` (a test's `op` parameter) is the operator it names, with Numba's typing."""
        kind, op = intrinsics.OPERATOR_MODULE[canon]
        if kwargs or len(args) != (1 if kind == "unary" else 2):
            raise Unsupported(node, f"{canon}()", f"takes {1 if kind == 'unary' else 2} positional argument(s)")
        operands = [self.expr(a) for a in args]
        if kind == "unary":
            return ir.Unary(op, operands[0])
        return ir.Compare(op, *operands) if kind == "compare" else ir.BinOp(op, *operands)

    def use_helper(self, name):
        self.helpers.add(name)
        self.helpers.update(HELPER_DEPENDENCIES.get(name, ()))

    # ------------------------------------------------------------ cuda.grid / gridsize
    def call_cuda_grid(self, node, args, kwargs):
        ndim = self._grid_ndim(node, args, kwargs)
        items = []
        for axis in "xyz"[:ndim]:
            # Numba computes the global index in int64, so the C does too (no 32-bit overflow)
            idx = ir.BinOp("+", ir.BinOp("*", _dim3("blockIdx", axis), _dim3("blockDim", axis)), _dim3("threadIdx", axis))
            items.append(idx)
        return items[0] if ndim == 1 else TupleValue(items)

    def call_cuda_gridsize(self, node, args, kwargs):
        ndim = self._grid_ndim(node, args, kwargs)
        items = [ir.BinOp("*", _dim3("blockDim", a), _dim3("gridDim", a)) for a in "xyz"[:ndim]]
        return items[0] if ndim == 1 else TupleValue(items)

    def _grid_ndim(self, node, args, kwargs):
        if not args and set(kwargs) == {"ndim"}:  # cuda.grid(ndim=3), as Numba's signature names it
            args = [kwargs.pop("ndim")]
        if len(args) != 1 or kwargs:
            raise Unsupported(node, f"{self.info.code(node.func)}()", "takes the number of dimensions, 1, 2 or 3 "
                              "(positional, or ndim=)")
        n = self.expr(args[0])
        if not (isinstance(n, ir.Const) and n.value in (1, 2, 3)):
            raise Unsupported(args[0], "cuda.grid() dimension", "must be the constant 1, 2 or 3")
        return n.value

    # ------------------------------------------------------------ cooperative groups
    def call_cuda_cg_this_grid(self, node, args, kwargs):
        """The grid group: numba-cuda launches a kernel that makes one cooperatively (its code then calls the
        device runtime's grid handle), whether or not it syncs, and so does the translation's launcher."""
        if args or kwargs:
            raise Unsupported(node, "cuda.cg.this_grid()", "takes no arguments")
        self.cooperative = True
        return GridGroup()

    def grid_sync(self, node, args, kwargs):
        """g.sync(): every thread of the grid waits here, so Numba launches such a kernel cooperatively
        (all blocks resident at once) and so does the translation's launcher."""
        if args or kwargs:
            raise Unsupported(node, "grid sync()", "takes no arguments")
        self.cooperative = True
        entry = intrinsics.lookup("cuda.cg.this_grid.sync")
        return ir.Call(entry, [])

    def call_cuda_shared_array(self, node, args, kwargs):
        raise Unsupported(node, "cuda.shared.array()", "must be assigned to a name on its own line",
                          "sm = cuda.shared.array(shape, dtype)")

    call_cuda_local_array = call_cuda_shared_array
    call_cuda_const_array_like = call_cuda_shared_array

    # ------------------------------------------------------------ atomics
    def atomic(self, node, op, args, kwargs):
        if kwargs:
            raise Unsupported(node, f"cuda.atomic.{op}()", "pass the arguments positionally")
        if op == "compare_and_swap":
            if len(args) != 3:
                raise Unsupported(node, "cuda.atomic.compare_and_swap()", "takes (array, old, value)")
            args = [args[0], None, args[1], args[2]]
            op = "cas"
        expected = 4 if op == "cas" else 3
        if op not in NATIVE_ATOMICS and op not in ("nanmax", "nanmin"):
            raise Unsupported(node.func, f"cuda.atomic.{op}", "is not a Numba atomic")
        if len(args) != expected:
            raise Unsupported(node, f"cuda.atomic.{op}()", f"takes {expected} arguments")
        part = None  # `cuda.atomic.add(z.real, i, v)` (fbpic's deposition): the part of a complex element
        if isinstance(args[0], cst.Attribute) and args[0].attr.value in ("real", "imag"):
            whole = self.value(args[0].value)
            if isinstance(whole, ir.ArrayVar) and whole.dtype.is_complex:
                arr, part = whole, args[0].attr.value
        if part is None:
            arr = self.value(args[0])
        if not isinstance(arr, ir.ArrayVar):
            raise Unsupported(args[0], f"cuda.atomic.{op}()", "the first argument must be an array")
        if args[1] is None:
            indices = [const_expr(0)]
        else:
            idx = self.value(args[1])
            indices = idx.items if isinstance(idx, TupleValue) else [idx]
        target = self.index_array(arr, indices, node) if len(indices) <= arr.ndim else None
        if not isinstance(target, ir.Load):
            shown = arr.name or self.info.code(args[0])
            raise Unsupported(args[1] if args[1] is not None else args[0], f"cuda.atomic.{op}() index",
                              f"'{shown}' needs {arr.ndim} indices")
        root = root_array(target.array)
        if root.kind == "const":
            raise Unsupported(args[0], f"cuda.atomic.{op}() on a constant array", f"'{root.name}' lives in constant memory")
        mark_written(target.array)  # through a view too: the parameter it views is no longer const
        target.node = target.node or (args[1] if args[1] is not None else node)  # where its index is
        dtype = arr.dtype
        address = ir.AddressOf(target)
        if part is not None:
            dtype = T.underlying(dtype)
            self.use_helper("complex_part")
            address = ir.Call(intrinsics.Intrinsic(f"complex.{part}", f"n2c::{part}_part", lambda ts: dtype, (1, 1)),
                              [address])
        allowed = intrinsics.ATOMICS.get(op, ("", "", "iu"))[2]
        if dtype.kind not in allowed:
            raise Unsupported(node, f"cuda.atomic.{op}() on {dtype}", f"Numba supports it for kinds '{allowed}' only")
        native, native_types = NATIVE_ATOMICS.get(op, ("", set()))
        if dtype.name in native_types:
            c_name = native
        elif op == "cas":
            c_name = "n2c::atomic_cas"
            self.use_helper("atomic_cas")
        else:
            c_name, helper, _ = intrinsics.ATOMICS[op]
            self.use_helper(helper)
        values = [self.expr(a) for a in args[2:]]
        entry = intrinsics.Intrinsic(f"cuda.atomic.{op}", c_name, lambda ts: dtype, (expected, expected),
                                     arg_types=lambda ts: [None] + [dtype] * len(values))
        return ir.Call(entry, [address] + values)

    # ------------------------------------------------------------ numba.cuda.random
    def random_draw(self, node, canon, args, kwargs):
        """xoroshiro128p_uniform_float32(states, i) and friends: the helper gets &states[i] (Numba indexes the
        states array as any array, negative indices included) and advances that state in place."""
        name = canon.rsplit(".", 1)[1]
        entry = intrinsics.lookup(canon)
        if entry is None:
            hint = ("make the states on the host with create_xoroshiro128p_states(n, seed) and pass them to the kernel"
                    if "states" in name else "use xoroshiro128p_uniform_float32/64, xoroshiro128p_normal_float32/64 "
                    "or xoroshiro128p_next")
            raise Unsupported(node.func, f"{canon}()", "is not a device function of numba.cuda.random", hint)
        want = entry.nargs[0] + 1
        if kwargs or len(args) != want:
            raise Unsupported(node, f"{name}()", f"takes {want} positional arguments: (states, index"
                              + (", seed)" if want == 3 else ")"))
        states = self.value(args[0])
        if not (isinstance(states, ir.ArrayVar) and states.dtype == T.XOROSHIRO128P and states.ndim == 1):
            raise Unsupported(args[0], f"{name}() states", "must be the 1-D array of xoroshiro128p states",
                              "pass the array create_xoroshiro128p_states(n, seed) made (its type: "
                              "xoroshiro128p_type[::1])")
        target = self.index_array(states, [self.expr(args[1])], node)
        mark_written(states)
        self.use_helper(entry.helper)
        return ir.Call(entry, [ir.AddressOf(target)] + [self.expr(a) for a in args[2:]])


def _dim3(name, axis):
    return ir.Builtin(f"{name}.{axis}", T.INT32, T.UINT32)


def _arity(nargs):
    lo, hi = nargs
    return str(lo) if lo == hi else f"{lo} to {hi}"


__all__ = ["CallLowerer"]
