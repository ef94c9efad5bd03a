"""A name or an attribute a kernel reads -> what it denotes: a local, a parameter, a constant of the module or of
the host function (or a template parameter of its call), a module's function or type, cuda's geometry, an array's
shape; or the located reason it is none of them."""

from __future__ import annotations

import builtins

import libcst as cst

from ..ir import intrinsics
from ..ir import nodes as ir
from ..ir import typesys as T
from ..errors import Poisoned, Reported, Unsupported
from .bindings import called_at_import, computed_in, factory_of
from .constants import (CONSTANT_LIBRARIES, CONSTANT_MEMORY_BYTES, MATH_CONSTANTS, ConstArray, DeviceArray,
                        TimeDelta, installed, library_constant)
from .expr import Dim3, GridGroup, GridSync, TupleValue, TypeValue, const_expr, no_length
from .info import STOOD_IN
from .namedtuples import fields_of
from .overloads import extension_member
from .recordfields import is_record
from .runhint import run_hint, with_run_hint
from .names import canonical, dotted, from_unread_module, resolve, scalar_type_of_name
from ..ir.facts import const_int, decided_compare, root_array
from .scan import find_nodes


class NameReadLowerer:
    """Needs, from the class it is mixed into: info, fn, scope, scalar_names, value(), and the Optional and
    per-call lowering (optionals.py, percall.py)."""

    def lower_Name(self, node):
        name = node.value
        if name in self.scope:
            value = self.scope[name]
            if isinstance(value, Poisoned):
                raise Reported(name)
            if isinstance(value, TupleValue):  # each use its own Name nodes: dataflow marks each with its defs
                return self.tuple_copy(value)
            return value
        if name in self.scalar_names:
            if name in self.optionals and name not in self.unwrapped:
                if name in self.none_locals and (self.fn.is_device or self.conditional):
                    return ir.Name(name)  # the number last assigned (the note at `name = None` says so)
                if self.fn.is_device or self.conditional:
                    raise Unsupported(node, f"'{name}' used where it may be None", "it holds the result of a "
                                      "function that returns None on some paths: Numba raises where such a None is "
                                      "used, which the translation reproduces (the thread stops) only for a kernel's "
                                      "statement that uses it whenever it runs", f"use it under `if {name} is not "
                                      "None:`")
                self.none_guards.append(name)  # the statement is preceded by `if b is None: return`
                self.unwrapped.add(name)  # so b is not None in the rest of it, nested blocks included
            return ir.Name(name)
        if name in ("True", "False"):
            return const_expr(name == "True", node)
        if name == "None":
            raise Unsupported(node, "None", "kernels have no None value", "use a sentinel number such as -1")
        if name in self.info.constants:
            return self.named_constant(name, node)
        if name in self.info.functions:
            raise Unsupported(node, f"function '{name}' used as a value", "device functions can only be called")
        if name in self.info.nonconstant:
            if name in self.info.per_call:
                return self.per_call_value(name, node)
            raise self.unknown_value(name, node)
        if name in self.info.aliases:
            what = self.info.aliases[name]
            value = library_constant(canonical(what))
            if value is not None:  # from scipy.constants import c
                return const_expr(value, node)
            if what.count(".") and not what.startswith(("numba", "numpy", "math", "cmath", ".")) or \
                    what.startswith("."):
                module = what.rsplit('.', 1)[0]
                if not what.startswith(".") and not installed(module):
                    library = canonical(what).startswith(CONSTANT_LIBRARIES)
                    raise Unsupported(node, f"imported name '{name}'", f"'{name}' comes from {module}, which is not "
                                      "installed here", f"install {module.split('.')[0]} where numba2cuda runs ("
                                      + ("it reads the constant from it)" if library else "then translate with "
                                         "--import-module, which imports the module and reads the value)"))
                raise Unsupported(node, f"imported name '{name}'", f"'{name}' comes from {module}, "
                                  "which numba2cuda cannot read without running it",
                                  "translate with --import-module (numba2cuda then imports the module as Numba "
                                  "would and reads the value), or pass it as a kernel argument")
            if "." in what:  # `from math import pi`, `from numpy import float32`, `from numba.cuda import threadIdx`
                return self.module_attribute(canonical(what), node)
            raise Unsupported(node, f"module '{name}' used as a value", "only its functions can be called")
        if self.info.star_imports:
            raise Unsupported(node, f"unknown name '{name}'", f"it may come from `from {self.info.star_imports[0]} "
                              "import *`, which numba2cuda cannot read without running it",
                              "translate with --import-module (numba2cuda then imports the module as Numba would "
                              "and reads the value), or import the name explicitly")
        if callable(getattr(builtins, name, None)):  # `y[row] = sum`: the builtin itself, a value Numba refuses
            raise Unsupported(node, f"builtin '{name}' used as a value", f"'{name}' is Python's builtin function, "
                              "not a number: Numba cannot store or compute with a function (its typing fails)",
                              f"call it ({name}(...)), or use the variable you meant")
        module = self.info.module_info
        if any(w in module.source for w in ("exec(", "globals()")) and module.imported is None:
            # an orbit propagator makes `tIdx`, `eccoIdx` ... with globals().update({...}) when it is imported
            hint = ("translate with --import-module (numba2cuda then imports the module as Numba would and reads the "
                    "values it made), or define it as a module-level constant")
            if module.import_failed is not None:
                hint = f"make the module importable for --import-module ({module.import_failed.message}), or " + \
                    "define it as a module-level constant"
            raise Unsupported(node, f"unknown name '{name}'", "no statement of this file binds it: the module makes "
                              "names when it runs (exec, globals())", hint)
        raise Unsupported(node, f"unknown name '{name}'",
                          "it is not a parameter, local variable, module constant or import",
                          "define it before the kernel as a module-level constant, or pass it as an argument")

    def named_constant(self, name, node):
        value = self.info.constants[name]
        note = self.info.value_notes.get(name)
        if note is not None and note not in self.info.notices:
            self.info.notices.append(note)
        if isinstance(value, DeviceArray) and not self.fn.is_device:
            return self.captured_array(name, value)
        if isinstance(value, (DeviceArray, TimeDelta)):
            what = ("a device array: Numba captures its pointer, so the kernel sees what it holds when it runs, "
                    "not a constant" if isinstance(value, DeviceArray) else "a timedelta64; kernels see it through "
                    "an integer cast such as np.int64(...)")
            raise Unsupported(node, f"'{name}'", f"is {what}", "pass it to the kernel as an argument")
        if isinstance(value, ConstArray):
            return self.global_array(name, value, node)
        lowered = self.constant(value, node, name if isinstance(value, tuple) else None)
        if isinstance(lowered, ir.Const):
            lowered.name = self.info.constant_c_name(name, value) if "." not in name else None
        return lowered

    def captured_array(self, name, value: DeviceArray) -> ir.ArrayVar:
        """`PRICES = cuda.to_device(...)` read by a kernel (numba-cuda's globals example): Numba captures its
        pointer, and the kernel reads what it holds when it runs. The translation takes that array as a parameter
        after the kernel's own, which a C++ caller passes (Python's launchers refuse it by name)."""
        known = self.scope.get(name)
        if isinstance(known, ir.ArrayVar):
            return known
        param = self.array_param(name, T.Array(value.dtype, len(value.shape)))
        self.captured.append(param)
        self.fn.notices.append(self.info.reporter.make(
            self.fn.node.name, f"kernel '{self.fn.name}'", f"reads {name}, a device array of the module, which Numba "
            f"captures by pointer: the translation's launcher takes it after the kernel's own arguments"))
        self.scope[name] = param.array
        return param.array

    def global_array(self, name, value, node):
        """A NumPy array of the module (or enclosing function) read by the kernel: Numba bakes its values into
        the kernel as a constant array, so it becomes a __constant__ array of the .cu."""
        if value.nbytes > CONSTANT_MEMORY_BYTES:
            raise Unsupported(node, f"module-level array '{name}'", f"is {value.nbytes} bytes; constant memory "
                              f"holds {CONSTANT_MEMORY_BYTES // 1024} KiB", "pass it to the kernel as an argument")
        if self.info.constant_c_name(name, value) is None:
            raise Unsupported(node, f"array '{name}'", "another scope of this file has an array of the same name "
                              "with other values", "give the arrays distinct names")
        known = self.scope.get(name)
        if isinstance(known, ir.ArrayVar):
            return known
        arr = ir.ArrayVar(name, value.dtype, [const_expr(s) for s in value.shape], "const", c_dims=True)
        arr.const_values = value.values
        arr.const_name = name
        self.scope[name] = arr
        self.arrays.append(arr)
        return arr

    def unknown_value(self, name, node) -> Unsupported:
        """Why a free name of the kernel has no value numba2cuda can know, and what to do."""
        module_reason = self.info.module_info.nonconstant.get(name)
        # a function of another module (`from utils import mask_get`) reads that module's variables: no closure
        closure = self.fn.enclosing is not None and module_reason != self.info.nonconstant[name]
        where = "closure variable" if closure else "module variable"
        reason = self.info.nonconstant[name]
        factory, runner = factory_of(reason), computed_in(reason)
        if factory is not None and not called_at_import(self.info, factory):
            hint = (f"pass '{name}' as a kernel argument, or make the kernel at module level with constant "
                    f"arguments (k = {factory}(...)) and translate k")
        elif runner is not None and not called_at_import(self.info, runner):
            hint = (f"pass '{name}' as a kernel argument, or compute it at module level (importing the module "
                    f"does not call '{runner}')")
        elif reason.endswith(STOOD_IN):
            hint = "put that module next to this one, or pass the value as a kernel argument" \
                if reason.startswith("comes from .") else \
                "install that package where numba2cuda runs, or pass the value as a kernel argument"
        elif name in self.info.per_call and self.fn.enclosing is not None and \
                not called_at_import(self.info, self.fn.enclosing.name.value):
            hint = (f"pass '{name}' to the kernel as an argument: each call of '{self.fn.enclosing.name.value}' "
                    "computes it (Numba compiles one kernel per call), which importing the module does not do")
        elif name in self.info.needs_run and self.info.module_info.imported is not None:
            # the import mode ran what sets it: what each run did instead
            hint = run_hint(self.info, self.fn.node) or "pass it as a kernel argument"
        elif name in self.info.needs_run and self.info.module_info.import_failed is not None:
            # --import-module was asked for and the import failed: naming the flag again would send the user round
            hint = (f"make the module importable for --import-module ({self.info.module_info.import_failed.message}),"
                    " or pass it as a kernel argument")
        elif name in self.info.needs_run:
            hint = ("translate with --import-module (numba2cuda then imports the module as Numba would and reads "
                    "the value), or pass it as a kernel argument")
        else:
            hint = ("kernels see module-level ints, floats and tuples of them; make it one, "
                    "or pass the value as a kernel argument")
        if factory or runner or name in self.info.per_call:
            hint = with_run_hint(self.info, self.fn.node, hint)
        return Unsupported(node, f"{where} '{name}'", self.info.nonconstant[name], hint)

    def constant(self, value, node, name=None):
        """VALUE as the kernel reads it; NAME's arrays inside a tuple (numba-cuda's reduction tests unroll a
        tuple of arrays) are constant arrays of their own, NAME_0, NAME_1 ..."""
        if isinstance(value, tuple):
            return TupleValue([self.constant(v, node, f"{name}_{k}" if name else None) for k, v in enumerate(value)])
        if isinstance(value, ConstArray) and name is not None and "." not in name:
            return self.global_array(name, value, node)
        if isinstance(value, ConstArray):
            raise Unsupported(node, "module-level array", "arrays are read through cuda.const.array_like",
                              "write: arr = cuda.const.array_like(NAME)")
        return const_expr(value, node)

    # ------------------------------------------------------------ attributes
    def namedtuple_read(self, base: TupleValue, node):
        """`x.r` of a tuple parameter typed without field names, where the source makes exactly one namedtuple it
        can be (frontend/namedtuples.py): its fields name the items from here on, with a note."""
        if not isinstance(node.value, cst.Name) or node.value.value not in self.fn.params:
            return None
        param = node.value.value
        read = {a.attr.value for a in find_nodes(self.fn.node, lambda n: isinstance(n, cst.Attribute)
                                                  and isinstance(n.value, cst.Name) and n.value.value == param)}
        scopes = [s for s in (self.fn.enclosing, self.info.module_info.module) if s is not None]
        names = fields_of(self.info, scopes, len(base.items), read)
        if names is None:
            return None
        base.names = names
        if param not in self.named_tuple_params:  # once per parameter, at its first field read
            self.named_tuple_params.add(param)
            self.fn.notices.append(self.info.reporter.make(node, f"tuple parameter '{param}'", "its type names no "
                                                           f"fields; read as the namedtuple ({', '.join(names)}) "
                                                           "the source makes with that many, as its launch passes it"))
        return base.items[names.index(node.attr.value)]

    def lower_Attribute(self, node):
        attr = node.attr.value
        canon = resolve(self.info, node)
        if canon is not None and dotted(node) in self.info.constants:  # `params.N` of a sibling module
            return self.named_constant(dotted(node), node)
        if canon is not None and dotted(node.value) not in self.info.constants:  # not `geom.LIMITS.shape`
            return self.module_attribute(canon, node)
        if dotted(node) in self.info.constants and dotted(node.value) not in self.scope:
            return self.named_constant(dotted(node), node)  # `Mode.ADD` of an IntEnum of the module
        base = self.value(node.value)
        if isinstance(base, TupleValue) and attr in base.names:  # `x.r` of a namedtuple parameter
            return base.items[base.names.index(attr)]
        if isinstance(base, TupleValue) and not base.names and attr not in ("real", "imag"):
            named = self.namedtuple_read(base, node)
            if named is not None:
                return named
            raise Unsupported(node, f"attribute .{attr} of a tuple", "its type names no fields (a namedtuple "
                              "argument is typed NamedTuple(x=int64, y=float64))", "give that type in --types, or "
                              "translate with --import-module to read it from a launch")
        if isinstance(base, Dim3):
            if attr not in ("x", "y", "z"):
                raise Unsupported(node, f".{attr}", f"{base.c_name} has only .x, .y and .z")
            return ir.Builtin(f"{base.c_name}.{attr}", T.INT32, T.UINT32)
        if is_record(base):  # `a[i].x`, `r.x` of `r = a[i]` or of a record argument
            return self.record_member(base, attr, node)
        if isinstance(base, ir.ArrayVar):
            self.whole_array_field(base, attr, node)
            return self.array_attribute(base, attr, node)
        if isinstance(base, ir.Expr) and attr in ("real", "imag"):
            return ir.Member(base, attr)
        if isinstance(base, ir.Expr) and attr == "x":  # cuda_fp8's __nv_bfloat16_raw: the typer checks the type
            return ir.Member(base, attr)
        if isinstance(base, GridGroup):
            if attr != "sync":
                raise Unsupported(node, f"grid group .{attr}", "Numba's grid group has only sync()", "call g.sync()")
            return GridSync()
        if isinstance(base, TypeValue) and attr == "type":
            return base  # arr.dtype.type: NumPy's scalar class, callable as a cast like the dtype
        raise Unsupported(node, f"attribute .{attr}", "only arrays (.shape, .size, .ndim) and cuda.* have attributes here")

    def module_attribute(self, canon, node):
        if canon in intrinsics.BUILTIN_DIM3:
            return Dim3(intrinsics.BUILTIN_DIM3[canon])
        parent = canon.rsplit(".", 1)[0]
        if parent in intrinsics.BUILTIN_DIM3 and canon[-1] in "xyz":
            return ir.Builtin(f"{intrinsics.BUILTIN_DIM3[parent]}.{canon[-1]}", T.INT32, T.UINT32)
        if canon == "cuda.warpsize":
            return ir.Builtin("warpSize", T.INT32, T.INT32)
        if canon == "cuda.laneid":
            self.helpers.add("laneid")
            return ir.Call(intrinsics.Intrinsic("cuda.laneid", "n2c::laneid", lambda ts: T.INT32, (0, 0)), [], "n2c::laneid")
        if canon in MATH_CONSTANTS:
            return const_expr(MATH_CONSTANTS[canon], node)
        if library_constant(canon) is not None:  # scipy.constants.c
            return const_expr(library_constant(canon), node)
        scalar = scalar_type_of_name(canon)
        if scalar is not None:
            return TypeValue(scalar)
        module = from_unread_module(canon)
        if module is not None and self.info.imported is not None:  # the import mode sees the module's own names
            raise Unsupported(node, f"'{self.info.code(node)}'", f"is an attribute of {module}, and the import mode "
                              "reads the values of the module's own names, not of another module's",
                              f"import it by name (`from {canon.rsplit('.', 1)[0]} import {canon.rsplit('.', 1)[1]}`"
                              "), or pass it as a kernel argument")
        if module is not None:  # `config.THRESHOLD` of `from . import config`
            raise Unsupported(node, f"'{self.info.code(node)}'", f"it comes from {module}, which numba2cuda did not "
                              "read: it is not next to this file, in a folder above it up to the project's root, or "
                              "on PYTHONPATH, or its value needs the module to run", "put the module's folder on "
                              "PYTHONPATH as the project's programs do, or translate with --import-module "
                              "(numba2cuda then imports the module as Numba would and reads the value), or pass it "
                              "as a kernel argument")
        if intrinsics.lookup(canon) is not None or canon.startswith("cuda.atomic."):
            raise Unsupported(node, f"function '{canon}' used as a value", "it can be called, or passed to a device "
                              "function as an argument, not kept in a variable or a tuple",
                              f"call {canon}(...) where it is needed, or pass it to the device function that calls it")
        full = "numba." + canon if canon.startswith("cuda.") else canon  # as imported, not as the table keys it
        raise Unsupported(node, f"'{self.info.code(node)}'", f"is {full}, which numba2cuda does not translate in "
                          "kernels (it translates numbers, arrays and the cuda, math and numpy names README "
                          "'Supported kernel language' lists; not an Enum member or a library's object)",
                          "pass its value as a kernel argument (an IntEnum member as its int), or use the LLM "
                          "backend for this kernel (--backend auto)")

    def array_attribute(self, arr: ir.ArrayVar, attr, node):
        if attr == "shape":
            return TupleValue([self.shape_of(arr, d) for d in range(arr.ndim)])
        if attr == "ndim":
            return const_expr(arr.ndim, node)
        if attr == "dtype":
            return TypeValue(arr.dtype)
        if attr == "size":
            total = self.shape_of(arr, 0)
            for d in range(1, arr.ndim):
                total = ir.BinOp("*", total, self.shape_of(arr, d))
            return total
        if attr == "T":
            return self.transposed(arr, node)
        if attr == "flat":
            return self.flattened(arr, node)
        member = extension_member(self.info, attr) if "overload_" in self.info.module_info.source else None
        if member is not None:  # numba-cuda's overload_method tests
            raise Unsupported(node, f"array attribute .{attr}", f"the module adds it to arrays with numba.extending's "
                              f"{member[1]} (line {self.info.reporter.location(member[0]).line}), which numba2cuda "
                              "does not translate", "call its implementation as a @cuda.jit(device=True) function "
                              "that takes the array, or use the LLM backend for this kernel (--backend auto)")
        raise Unsupported(node, f"array attribute .{attr}", "only .shape, .size, .ndim, .dtype, .T and .flat are "
                          "supported")

    def flattened(self, arr: ir.ArrayVar, node):
        """`u.flat[idx]` (a flow solver's reduction over a 3-D field): Numba's flat iterator reads the elements in
        C order, which of a row-major array (what numba2cuda takes a parameter to be) is its memory: a 1-D view of
        all of it."""
        if arr.ndim == 1 and arr.step is None:
            return arr
        if not _whole(arr):
            raise Unsupported(node, f"'{self.info.code(node)}'", ".flat reads the elements in C order, which is not "
                              "their order in memory for a window, a strided view or a Fortran-order array",
                              "index the array with one index per dimension")
        return ir.ArrayVar("", arr.dtype, [self.array_attribute(arr, "size", node)], "view", base=arr)

    def reshaped(self, arr: ir.ArrayVar, node, args, kwargs):
        """`arr.reshape(3 * 2)`, `a.reshape((n, -1))`: Numba's reshape of a contiguous array is a view of the same
        memory with other extents, read in C order (one -1 is what the others leave of the size)."""
        if kwargs or not args:
            raise Unsupported(node, ".reshape()", "takes the new shape, as numbers or one tuple")
        if not _whole(arr):
            raise Unsupported(node, f"'{self.info.code(node)}'", "reshape() supports contiguous arrays only (Numba's "
                              "words): a window, a strided view or a Fortran-order array is not one",
                              "index the array with one index per dimension")
        given = self.value(args[0]) if len(args) == 1 else None
        dims = given.items if isinstance(given, TupleValue) else [self.value(a) for a in args]
        if not dims or not all(isinstance(d, ir.Expr) for d in dims):
            raise Unsupported(node, ".reshape()", "takes the new shape, as numbers or one tuple of numbers")
        # a negative extent (-1) is what the others leave of the size; one read at run time may be negative too
        # (Numba normalises the shape when the reshape runs: normalize_reshape_value), unless it is an extent
        unknown = [k for k, d in enumerate(dims) if const_int(d) is not None and const_int(d) < 0]
        if len(unknown) > 1:
            raise Unsupported(node, ".reshape()", "can only specify one unknown dimension (-1)")
        runtime = [k for k, d in enumerate(dims) if const_int(d) is None and not _an_extent(d)]
        size = self.array_attribute(arr, "size", node)

        def negative(d):
            return ir.Compare("<", d, const_expr(0))

        known = None
        for k, d in enumerate(dims):
            if k not in unknown:
                factor = ir.IfExp(negative(d), const_expr(1), d) if k in runtime else d
                known = factor if known is None else ir.BinOp("*", known, factor)
        known = known if known is not None else const_expr(1)  # reshape(-1): no other extent
        # where Numba raises ValueError (sizes that disagree, two unknown extents), the thread ends
        leaves = ir.Compare("!=", ir.BinOp("%", size, known), const_expr(0))
        inferred = ir.BinOp("//", size, known)
        if const_int(known) == 0:  # nothing but zeros known: the size must be 0, and so is the unknown extent
            leaves, inferred = ir.Compare("!=", size, const_expr(0)), const_expr(0)
        elif const_int(known) is None:
            leaves = ir.IfExp(ir.Compare("==", known, const_expr(0)), ir.Compare("!=", size, const_expr(0)), leaves)
            inferred = ir.IfExp(ir.Compare("==", known, const_expr(0)), const_expr(0), inferred)
        wrong = []
        if unknown:
            wrong = [negative(dims[k]) for k in runtime] + ([leaves] if len(dims) > 1 else [])
            dims[unknown[0]] = inferred if len(dims) > 1 else size
        elif runtime:
            some = negative(dims[runtime[0]])
            if len(runtime) > 1:  # how many are negative: two are an error, one is the unknown extent
                count = ir.IfExp(some, const_expr(1), const_expr(0))
                for k in runtime[1:]:
                    count = ir.BinOp("+", count, ir.IfExp(negative(dims[k]), const_expr(1), const_expr(0)))
                wrong.append(ir.Compare(">", count, const_expr(1)))
                some = ir.Compare(">", count, const_expr(0))
            wrong.append(ir.IfExp(some, leaves, ir.Compare("!=", known, size)))
            dims = [ir.IfExp(negative(d), inferred, d) if k in runtime else d for k, d in enumerate(dims)]
        else:
            wrong.append(ir.Compare("!=", known, size))
        self.stop_unless(wrong, node, "reshape() of sizes read at run time")
        return ir.ArrayVar("", arr.dtype, dims, "view", base=arr)

    def stop_unless(self, wrong: list, node, what: str) -> None:
        """End the thread before the statement where any test of WRONG holds, as Numba's raise there ends it (a
        device function's raise ends the kernel's thread too); nothing where each is decided false already."""
        wrong = [w for w in wrong if decided_compare(w) is not False]
        if not wrong:
            return
        if self.conditional:
            raise Unsupported(node, what, "Numba checks it where it is made, which here is under a condition (a "
                              "loop's test, a conditional expression)", "make the view in a statement of its own")
        cond = wrong[0] if len(wrong) == 1 else ir.BoolOp("or", wrong)
        check = ir.If(cond=cond, body=[self.thread_end()], orelse=[])
        check.node = node
        self.hoisted.append(check)

    def transposed(self, arr: ir.ArrayVar, node):
        """`a.T`: Numba's transpose is a view with the strides reversed. Of a row-major 2-D array that is the same
        elements read column-major, so a view with the shape swapped and the other order, as a Fortran-order
        parameter is indexed; a 1-D array is its own transpose."""
        if arr.ndim <= 1:
            return arr
        if arr.ndim > 2 or arr.pitch is not None or arr.step is not None or root_array(arr).pointer:
            what = f"{arr.ndim}-D array" if arr.ndim > 2 else "window or strided view"
            raise Unsupported(node, f"'{self.info.code(node)}' (.T of a {what})", "numba2cuda transposes whole "
                              "2-D arrays (read column-major); not a window, a strided view or an array of more "
                              "dimensions", "index the array with its indices swapped (a[j, i] for a.T[i, j])")
        shape = [self.shape_of(arr, 1), self.shape_of(arr, 0)]
        return ir.ArrayVar("", arr.dtype, shape, "view", base=arr, fortran=not arr.fortran)

    def shape_of(self, arr: ir.ArrayVar, dim: int) -> ir.Expr:
        if root_array(arr).pointer:
            raise no_length(root_array(arr), None, "length")
        if arr.kind in ("param", "alias", "dynamic"):  # a dynamic array's length: the launch's bytes over its size
            return ir.ShapeOf(arr, dim)
        return arr.shape[dim]


def _whole(arr: ir.ArrayVar) -> bool:
    """Whether ARR's elements lie in its memory in C order, as a whole row-major array's do: not a window, a
    strided view, a Fortran-order array or a pointer (which has no extent)."""
    return arr.pitch is None and arr.step is None and not arr.fortran and not root_array(arr).pointer


def _an_extent(e) -> bool:
    """Whether E is an array's extent or a product or sum of extents and non-negative constants: never -1."""
    if isinstance(e, ir.ShapeOf):
        return True
    if isinstance(e, ir.Const):
        return isinstance(e.value, int) and e.value >= 0
    return isinstance(e, ir.BinOp) and e.op in ("*", "+") and _an_extent(e.left) and _an_extent(e.right)
