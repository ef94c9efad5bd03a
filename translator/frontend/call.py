"""libcst calls -> KernelIR: intrinsics, atomics, cuda.grid (casts and builtins: builtins.py; device functions:
devcalls.py; NumPy's reductions: reductions.py)."""

from __future__ import annotations

import builtins
import cmath
import difflib
import math
import os
import re

import libcst as cst
import numpy as np

from ..ir import intrinsics
from ..ir import nodes as ir
from ..ir import typesys as T
from ..errors import Reported, Unsupported
from ..ir.facts import mark_written, root_array
from ..ir.numba_cases import CUDA_NAMES
from .bindings import called_at_import, computed_in, factory_of
from .names import dotted, from_unread_module, resolve, scalar_type_of_name
from .builtins import BuiltinLowerer
from .reductions import METHODS as REDUCTION_METHODS, REDUCTIONS, ReductionLowerer
from .runhint import with_run_hint
from .scan import names_bound_anywhere
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


class CallLowerer(BuiltinLowerer, ReductionLowerer):
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
        if in_scope:
            self.value(head)  # a name whose definition already failed is not reported twice
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in REDUCTION_METHODS and not args and \
                (in_scope or isinstance(node.func.value, cst.Subscript)) and \
                isinstance(self.value(node.func.value), ir.ArrayVar):  # a.sum(), m[i].mean()
            return self.reduction(node, node.func.attr.value, [node.func.value], kwargs)
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

    def unknown_callee(self, node: cst.Call, canon: str) -> Unsupported:
        """Why a call is not translated, in the terms of where the callee comes from."""
        name = node.func.value if isinstance(node.func, cst.Name) else None
        made_by = self.info.value_nodes.get(name) if name else None
        maker = resolve(self.info, made_by.func) if isinstance(made_by, cst.Call) else None
        if maker == "cuda.declare_device":
            return Unsupported(node.func, f"call to {name}()", f"'{name}' is a foreign device function "
                               "(cuda.declare_device), linked from CUDA or PTX source that numba2cuda does not read",
                               "write the function in Python as a @cuda.jit(device=True) function, which "
                               "numba2cuda translates with the kernel")
        module = from_unread_module(canon)
        own = os.path.splitext(os.path.basename(self.info.module_info.path))[0]
        if module is not None and module.rpartition(".")[2] == own:  # the import mode named this very module
            short = canon.rpartition(".")[2]
            return Unsupported(node.func, f"call to {short}()", f"'{short}' is a plain Python function of this file "
                               "(not @cuda.jit): a kernel calls it only through an extension registered for it "
                               "(@overload, @intrinsic), which numba2cuda does not translate",
                               "write it as a @cuda.jit(device=True) function, or use the LLM backend for this "
                               "kernel (--backend auto)")
        if module is not None:
            return Unsupported(node.func, f"call to {canon.rpartition('.')[2]}()", f"it comes from {module}, which "
                               "numba2cuda does not read: it translates the device functions of this file and of "
                               "the modules next to it (in its folder or package) that it imports",
                               "define the device function in this file or a module next to it")
        if name is not None and name in self.info.nonconstant:
            reason = self.info.nonconstant[name]
            factory = factory_of(reason)
            hint = "call a @cuda.jit(device=True) function of this module instead"
            runner = computed_in(reason)
            if factory is not None and not called_at_import(self.info, factory):
                # a factory's parameter: only a call with a device function gives it, which importing never makes
                hint = (f"make the kernel at module level (k = {factory}(f, ...) with a device function f) and "
                        "translate k with --import-module, or " + hint)
            elif runner is not None and not called_at_import(self.info, runner):
                # a test method's or a script's main(): importing the module never makes it
                hint = (f"make '{name}' at module level (importing the module does not call '{runner}'), or "
                        + hint)
            elif self.info.module_info.import_failed is not None and name in self.info.needs_run:
                failed = self.info.module_info.import_failed.message
                hint = (f"make the module importable for --import-module ({failed}), which then reads the function "
                        "it holds, or " + hint)
            elif self.info.module_info.imported is None and (
                    name in self.info.needs_run or factory is not None and called_at_import(self.info, factory)):
                hint = ("translate with --import-module (numba2cuda then imports the module as Numba would and "
                        "reads the function it holds), or " + hint)
            if factory is not None or runner is not None:
                hint = with_run_hint(self.info, self.fn.node, hint)
            return Unsupported(node.func, f"call to {name}()", f"'{name}' {reason}", hint)
        if numba_has(canon):
            return Unsupported(node.func, f"call to {canon}()", "Numba supports it in kernels; numba2cuda does not "
                               "translate it yet", "use the LLM backend for this kernel (--backend auto), or write "
                               "it with the functions README 'Supported kernel language' lists")
        if name is not None and any(isinstance(stmt, cst.ClassDef) and stmt.name.value == name
                                    for stmt in self.info.module_info.module.body):
            # the numba-cuda docs' Interval: a Python class Numba learns to type through numba.extending
            return Unsupported(node.func, f"call to {name}()", f"'{name}' is a class of this module; a type a "
                               "module registers with Numba's extension API (numba.extending) is not translated",
                               "pass its fields as numbers or arrays, or use the LLM backend for this kernel "
                               "(--backend auto)")
        overloaded = self.info.overloads.get(name) if name is not None else None
        if overloaded is not None:
            where, why = overloaded
            return Unsupported(node.func, f"call to {name}()", f"'{name}' is implemented by numba.extending's "
                               f"overload (line {self.info.reporter.location(where).line}), and {why}; numba2cuda "
                               "reads an overload that returns one implementation whatever the types",
                               "call the implementation this kernel needs, made a @cuda.jit(device=True) function")
        plain = next((stmt for stmt in self.info.module_info.module.body if isinstance(stmt, cst.FunctionDef)
                      and stmt.name.value == name), None) if name is not None and canon == name else None
        if plain is not None and not plain.decorators and not any(
                isinstance(small, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name
                                                      for t in small.targets)
                for stmt in self.info.module_info.module.body if isinstance(stmt, cst.SimpleStatementLine)
                for small in stmt.body):  # not `f = cuda.jit(device=True)(f)` either
            # a student's password cracker hashes with hashlib in an undecorated helper the kernel calls
            return Unsupported(node.func, f"call to {name}()", f"'{name}' is a plain Python function of this module "
                               "(no @cuda.jit(device=True) or @njit): Numba cannot call it from a kernel either "
                               "(\"Untyped global name\")", "decorate it with @cuda.jit(device=True) if it uses only "
                               "what kernels may (numbers, arrays, math), or do that work on the host")
        removed = _removed_numpy_alias(canon)
        if removed is not None:
            return Unsupported(node.func, f"call to {canon}()", removed[0], removed[1])
        if isinstance(node.func, cst.Name) and canon == name and not hasattr(builtins, name) and \
                name not in names_bound_anywhere(self.info.module_info.module):
            # ZMCintegral's `fun`, made by exec(..., globals()) when the module runs; or a typo
            module = self.info.module_info
            made = any(w in module.source for w in ("exec(", "globals()"))
            why = (" (Python stops here with a NameError)" if not made else
                   ": the module makes names when it runs (exec, globals())")
            hint = "define it as a @cuda.jit(device=True) function of this module, or import it"
            if made and module.import_failed is not None:
                hint = f"make the module importable for --import-module ({module.import_failed.message}), or " + hint
            elif made and module.imported is not None:  # ZMCintegral's exec runs in a function the run never calls
                why += ", and importing it did not make this one (the code that makes it runs later)"
            elif made:
                hint = ("translate with --import-module (numba2cuda then imports the module as Numba would and reads "
                        "the function the run made), or " + hint)
            return Unsupported(node.func, f"call to {name}()", f"'{name}' is defined nowhere in this file{why}", hint)
        parts = canon.split(".")
        if len(parts) == 2 and parts[0] == "cuda" and parts[1] not in CUDA_NAMES:
            # cu_pg_parquet's `cuda.printf(...)`: CUDA C's spelling, which numba.cuda does not have
            near = difflib.get_close_matches(parts[1], CUDA_NAMES, n=1)
            hint = _C_SPELLINGS.get(parts[1]) or (f"did you mean cuda.{near[0]}()?" if near else _hint_for(canon))
            return Unsupported(node.func, f"call to {canon}()", f"numba.cuda has no '{parts[1]}': Numba raises "
                               "AttributeError when it compiles the kernel", hint)
        return Unsupported(node.func, f"call to {canon}()", "is not supported in kernels", _hint_for(canon))

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


_CUDA_VECTOR = re.compile(r"^cuda\.(u?int(8|16|32|64)|float(16|32|64))x[1-4]$")


def numba_has(canon: str) -> bool:
    """Does Numba compile a call to CANON in a kernel, where numba2cuda's table has no entry: math/cmath functions
    (numba-cuda implements nearly all of Python's), CUDA vector types, bfloat16?"""
    module, _, attr = canon.partition(".")
    if module in ("math", "cmath") and "." not in attr:
        return callable(getattr(math if module == "math" else cmath, attr, None))
    return bool(_CUDA_VECTOR.match(canon)) or canon.startswith(("cuda.bf16.", "cuda.libdevice."))


def _dim3(name, axis):
    return ir.Builtin(f"{name}.{axis}", T.INT32, T.UINT32)


def _arity(nargs):
    lo, hi = nargs
    return str(lo) if lo == hi else f"{lo} to {hi}"


# NumPy's aliases of Python's types, removed in NumPy 1.24: Numba finds no `np.int` to compile (AttributeError)
_REMOVED_NP_ALIASES = {"int": "int", "float": "float", "bool": "bool", "complex": "complex", "object": "object",
                       "str": "str", "long": "int", "unicode": "str"}


def _removed_numpy_alias(canon: str) -> tuple[str, str] | None:
    """(message, hint) for `np.int(x)` where the installed NumPy no longer has it, else None."""
    attr = canon[3:] if canon.startswith("np.") else ""
    if attr not in _REMOVED_NP_ALIASES or isinstance(getattr(np, attr, None), type):
        return None
    builtin = _REMOVED_NP_ALIASES[attr]
    return (f"np.{attr} was NumPy's alias of Python's {builtin}, removed in NumPy 1.24: numpy has no attribute "
            f"'{attr}', so Numba cannot compile it either", f"write {builtin}(...)")


_C_SPELLINGS = {"printf": "write print(...), which numba2cuda translates to printf",
                "atomicAdd": "write cuda.atomic.add(array, index, value)",
                "__syncthreads": "write cuda.syncthreads()"}


def _hint_for(canon: str) -> str:
    if canon.startswith("np."):
        return "kernels cannot call NumPy array functions; write the loop, or use math.* on scalars"
    if canon.startswith("cuda."):
        return "see README 'Supported kernel language' for the cuda.* functions numba2cuda translates"
    return "call only cuda.*, math.*, casts, min/max/abs/round/len and @cuda.jit(device=True) functions"


__all__ = ["CallLowerer"]
