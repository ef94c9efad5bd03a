"""Calls numba2cuda does not translate -> a located reason in the terms of where the callee comes from: a foreign
device function, a module it does not read, a value only running the module gives, an extension overload, a plain
Python function, a removed NumPy alias, a cuda.* name numba.cuda lacks (with the nearest one)."""

from __future__ import annotations

import builtins
import cmath
import difflib
import math
import os
import re

import libcst as cst
import numpy as np

from ..errors import Unsupported
from ..ir.numba_cases import CUDA_NAMES
from .bindings import called_at_import, computed_in, factory_of
from .names import dotted, from_unread_module, resolve
from .namedtuples import named_fields
from .runhint import with_run_hint
from .scan import find_nodes, names_bound_anywhere


def unread_module_call(node: cst.Call, canon: str, module: str) -> Unsupported:
    return Unsupported(node.func, f"call to {canon.rpartition('.')[2]}()", f"it comes from {module}, which "
                       "numba2cuda does not read: it translates the device functions of this file and of the modules "
                       "next to it (in its folder or package) that it imports",
                       "define the device function in this file or a module next to it")


def _this_module(view, module: str) -> bool:
    """Whether MODULE, a module's dotted name, is the file VIEW reads (the import mode names it so)."""
    return module.rpartition(".")[2] == os.path.splitext(os.path.basename(view.module_info.path))[0]


def unread_calls_below(view, fn_node, functions, seen=None) -> list[Unsupported]:
    """The calls into modules numba2cuda does not read in the device functions FN_NODE calls (and in theirs). Each
    fails that function's own translation, which comes after its caller's: where the caller fails first, on the
    value such a function returns (a tuple it unpacks, read as a number), these are the errors to report, since
    its own is only their consequence (a neutron guide's propagation through a geometry module not found)."""
    seen = set() if seen is None else seen
    found = []
    for call in find_nodes(fn_node, lambda n: isinstance(n, cst.Call)):
        name = dotted(call.func)
        callee = functions.get(name) if name else None
        if callee is None or not callee.is_device or callee.key in seen:
            continue
        seen.add(callee.key)
        scope = callee.scope or view
        own = scope.functions if callee.scope is not None else functions
        for inner in find_nodes(callee.node, lambda n: isinstance(n, cst.Call)):
            inner_name = dotted(inner.func)
            canon = resolve(scope, inner.func) if inner_name and inner_name not in own else None
            module = from_unread_module(canon) if canon else None
            if module is not None and not _this_module(scope, module):
                found.append(unread_module_call(inner, canon, module))
        found += unread_calls_below(scope, callee.node, own, seen)
    return found


class UnknownCallee:
    """Mixed into CallLowerer: the error for a call it has no translation of."""

    def unknown_callee(self, node: cst.Call, canon: str) -> Unsupported:
        """Why a call is not translated, in the terms of where the callee comes from."""
        name = node.func.value if isinstance(node.func, cst.Name) else None
        fields = named_fields(self.info, name) if name else None
        if fields is not None:
            return Unsupported(node.func, f"call to {name}()", f"'{name}' is a namedtuple class ({', '.join(fields)}); "
                               "numba2cuda reads a namedtuple a kernel is given, but does not build one in a kernel",
                               "pass the fields as values of their own (or a plain tuple) to the device function")
        made_by = self.info.value_nodes.get(name) if name else None
        maker = resolve(self.info, made_by.func) if isinstance(made_by, cst.Call) else None
        if maker == "cuda.declare_device":
            return Unsupported(node.func, f"call to {name}()", f"'{name}' is a foreign device function "
                               "(cuda.declare_device), linked from CUDA or PTX source that numba2cuda does not read",
                               "write the function in Python as a @cuda.jit(device=True) function, which "
                               "numba2cuda translates with the kernel")
        module = from_unread_module(canon)
        if module is not None and _this_module(self.info, module):  # the import mode named this very module
            short = canon.rpartition(".")[2]
            return Unsupported(node.func, f"call to {short}()", f"'{short}' is a plain Python function of this file "
                               "(not @cuda.jit): a kernel calls it only through an extension registered for it "
                               "(@overload, @intrinsic), which numba2cuda does not translate",
                               "write it as a @cuda.jit(device=True) function, or use the LLM backend for this "
                               "kernel (--backend auto)")
        if module is not None:
            return unread_module_call(node, canon, module)
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
        if overloaded is not None and overloaded[2]:
            return Unsupported(node.func, f"call to {name}()", f"'{name}' is made for Numba with numba.extending's "
                               f"{overloaded[1]} (line {self.info.reporter.location(overloaded[0]).line}): its LLVM "
                               "IR is written by hand, and numba2cuda does not translate LLVM IR",
                               "write it as a @cuda.jit(device=True) function (or, for linked CUDA code, "
                               "cuda.declare_device), or use the LLM backend for this kernel (--backend auto)")
        if overloaded is not None:
            where, why, _ = overloaded
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


# CUDA vector types, and the C names numba-cuda gives them too (stubs.py: short2 is int16x2, double4 float64x4)
_CUDA_VECTOR = re.compile(r"^cuda\.((u?int(8|16|32|64)|float(16|32|64))x|u?(char|short|int|long|longlong)|float|double)"
                          r"[1-4]$")
# numba-cuda's overloads of carray/farray: an array over a pointer (a CPointer argument, ffi.from_buffer's)
_POINTER_ARRAYS = ("carray", "farray")


def numba_has(canon: str) -> bool:
    """Does Numba compile a call to CANON in a kernel, where numba2cuda's table has no entry: math/cmath functions
    (numba-cuda implements nearly all of Python's), CUDA vector types, bfloat16?"""
    module, _, attr = canon.partition(".")
    if module in ("math", "cmath") and "." not in attr:
        return callable(getattr(math if module == "math" else cmath, attr, None))
    return bool(_CUDA_VECTOR.match(canon)) or canon.startswith(("cuda.bf16.", "cuda.libdevice.")) or \
        canon.rpartition(".")[2] in _POINTER_ARRAYS and canon.startswith(("cuda.", "numba."))


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
