"""A parsed module -> its kernels and device functions as Numba would make them, found by reading the source.

Numba makes a kernel wherever cuda.jit is applied to a function, so numba2cuda looks for every spelling:
  * a decorator: `@cuda.jit`, `@cuda.jit(sig, ...)`, a name bound to either (`gpu = cuda.jit(fastmath=True)`),
    or a project's own decorator whose body returns one (`def kernel(f): return cuda.jit(f)`,
    `def kernel(sig): return cuda.jit(sig, fastmath=True)`, or an inner decorator function that does);
  * a call: `k = cuda.jit(sig)(fn)`, `cuda.jit(fn, device=True)`, wherever it is written (module level, a
    test method); several calls on one function merge as several signatures of one kernel;
  * inside a function (the numba-cuda doc examples): the kernel sees that function's imports and constants
    (scope views, frontend/info.py);
  * a factory: `scale3 = make_scaler(3.0)` at module level, where make_scaler defines a kernel that closes over
    its parameters and returns it: the kernel is made again with the parameters bound to the call's constants.
A kernel name defined twice in one scope is the last definition, as in Python.
"""

from __future__ import annotations

from collections import ChainMap

import libcst as cst

from ..errors import Unsupported
from .bindings import Binder
from .closures import array_mutations, at_compile, bind_call, module_at_compile, publishes_locals
from .constants import ConstArray
from .decorators import function_info, jit_parts, returned_expression
from .info import FunctionInfo, ModuleInfo
from .jitoptions import type_text
from .overloads import array_method_target, implementation, lowered_target, method_c_name, overload_target
from .percall import per_call_kinds
from .inner import captured_names, lambda_as_def, named_lambda
from .scan import find_nodes
from .sites import JitCallSites
from .ufuncs import cpu_jit, ufunc_decorator
from .unroll import MAX_ITERATIONS, Iteration, compile_points, iteration_labels, loop_elements, reads_loop_names

# ------------------------------------------------------------------ the walk

class _GlobalFinder(cst.CSTVisitor):
    def __init__(self):
        self.found: list = []

    def visit_Global(self, node) -> None:
        self.found.append(node)

    @classmethod
    def find(cls, module) -> list:
        finder = cls()
        module.visit(finder)
        return finder.found


class Discoverer(JitCallSites):
    """Walks the module once for definitions (with a scope view per enclosing function), then applies the
    cuda.jit calls and the factory calls it saw."""

    def __init__(self, info: ModuleInfo, sibling=None):
        self.info = info
        self.sibling = sibling
        self.sites: list = []  # (view, call, bound name, key prefix)
        self.made_at: dict = {}  # cuda.jit(...)(fn) call -> the FunctionInfo it made
        self.candidates: list = []  # (def, its scope view): functions that may be kernel factories
        self.branch_depth = 0  # > 0 inside an if or try: a definition there is one of several the module may make
        self.iteration = None  # (loop, label, index) while a loop's body is read once per iteration (unroll.py)
        info.plain_functions = ChainMap(info.plain_functions)
        info.failed_functions = ChainMap(info.failed_functions)
        # names a function declares `global`: `global f_gpu; f_gpu = cuda.jit(device=True)(f)` in a setup
        # function binds the module's f_gpu, which the module's kernels then call
        self.global_names = {n.name.value for g in _GlobalFinder.find(info.module) for n in g.names} \
            if "global" in info.source else set()  # a walk of the whole module spared where none can be

    def run(self) -> None:
        self.walk(self.info, self.info.module.body, None, "")
        self.apply_sites(0)
        self.instantiate_factories()

    # ------------------------------------------------------------ definitions
    def walk(self, view, body, enclosing, prefix) -> None:
        for stmt in body:
            if isinstance(stmt, cst.FunctionDef):
                self.definition(view, stmt, enclosing, prefix)
            elif isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
                self.walk(view, stmt.body.body, enclosing, f"{prefix}{stmt.name.value}.")
            elif isinstance(stmt, cst.SimpleStatementLine):
                self.find_sites(view, stmt, prefix)
            elif isinstance(stmt, cst.For) and self.unrolled(view, stmt, enclosing, prefix):
                continue
            else:
                self.branch_depth += isinstance(stmt, (cst.If, cst.Try))
                for block in _blocks(stmt):
                    self.walk(view, block, enclosing, prefix)
                self.branch_depth -= isinstance(stmt, (cst.If, cst.Try))

    def unrolled(self, view, loop: cst.For, enclosing, prefix) -> bool:
        """A loop in a function whose body defines kernels that read its names, over values the source spells: its
        body read once per iteration (frontend/unroll.py), each kernel of it made once per iteration. False (the
        loop read as any other) where it is not such a loop."""
        if enclosing is None or self.iteration is not None or loop.orelse is not None or \
                not reads_loop_names(view, loop):
            return False
        elements = loop_elements(view, loop.iter, enclosing)
        points = compile_points(view, loop)
        if not elements or len(elements) > MAX_ITERATIONS or points is None:
            return False
        labels = iteration_labels(view, elements)
        for k, (element, label) in enumerate(zip(elements, labels)):
            self.iteration = (loop, label, k)
            run = Iteration(view, loop, element, self.sibling, enclosing.name.value)
            try:  # each statement in the view of the moment what it defines compiles
                for stmt, point in zip(loop.body.body, points):
                    self.walk(run.at(point), [stmt], enclosing, prefix)
            finally:
                self.iteration = None
        return True

    def definition(self, view, fn: cst.FunctionDef, enclosing, prefix) -> None:
        name = fn.name.value
        jit = site = None
        for dec in fn.decorators:
            jit = jit_parts(view, dec.decorator)
            if jit is not None:
                site = dec
                break
        if jit is None and cpu_jit(view, fn):
            kernel = self.info.functions.get(prefix + name)
            if self.branch_depth and kernel is not None and not kernel.is_device:
                # `if _use_gpu: @cuda.jit def f` ... `else: @njit(parallel=True) def f` (a particle pusher): the
                # CPU twin of the kernel, the other arm of a choice Numba's GPU run takes the CUDA way
                self.info.notices.append(self.info.reporter.make(fn.name, f"'{name}'", "a CPU-jitted twin of the "
                                                                 "kernel on another branch: the kernel is translated"))
                return
            jit = ([], {"device": cst.Name("True")})  # a @numba.jit function a kernel calls: a device function
        if jit is None:
            try:
                spec = ufunc_decorator(view, fn, type_text)
            except Unsupported as exc:  # a ufunc this reading cannot make: its own failure, not the module's
                self.defer(view, fn, prefix + name, name, exc)
                return
            if spec is not None:  # @vectorize/@guvectorize(target="cuda"): a device function plus its kernels
                fi = self.register(view, fn, ([], {"device": cst.Name("True")}), enclosing, prefix + name, name,
                                   fn.decorators[0])
                if fi is not None:
                    fi.ufunc = spec
                return
        target = next((t for t in (overload_target(view, d.decorator) or array_method_target(view, d.decorator)
                                   for d in fn.decorators) if t), None)
        if jit is None and target is not None:
            self.overload(view, fn, target, prefix)
            return
        lowered = next(((d.decorator, t) for d in fn.decorators for t in [lowered_target(view, d.decorator, fn)]
                        if t), None)
        if jit is None and lowered is not None:  # numba-cuda's external_add: the message of its calls says how
            (dec, (target, api)) = lowered
            view.overloads.setdefault(target, (dec, api, True))
        if jit is None:
            view.plain_functions.maps[0][name] = (fn, view, prefix)
            if isinstance(fn.body, cst.IndentedBlock):
                child = self.scope_view(view, fn)
                self.walk(child, fn.body.body, fn, f"{prefix}{name}.")
                self.candidates.append((fn, child))
                if view is self.info and publishes_locals(fn):
                    self.publish(child)
            return
        fi = self.register(view, fn, jit, enclosing, prefix + name, name, site)
        if fi is not None:
            self.nested_functions(view, fi)

    def nested_functions(self, view, fi: FunctionInfo) -> None:
        """`def neg(v): ...` inside a kernel (a genetic program's generated kernel defines its primitives there):
        Numba inlines such a function where it is called, so it is a device function the kernel alone sees: a
        local constant of the kernel is its value, and what else it reads of the kernel (a parameter, a value
        computed per thread) is passed to it at each call (captured_names), the value it holds there."""
        inner = find_nodes(fi.node.body, lambda n: isinstance(n, cst.FunctionDef) or named_lambda(n),
                           enter=lambda n: not isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)))
        if not inner:
            return
        inner = [n if isinstance(n, cst.FunctionDef) else self.lambda_def(n) for n in inner]
        child = self.scope_view(view, fi.node)
        fi.scope = (fi.scope or view).view(functions=ChainMap({}, (fi.scope or view).functions))
        made = []
        for fn in inner:
            one = self.register(child, fn, ([], {"device": cst.Name("True")}), fi.node, f"{fi.key}.{fn.name.value}",
                                fn.name.value, None)
            if one is not None:
                fi.scope.functions.maps[0][fn.name.value] = one
                made.append(one)
        captured = captured_names(fi, made, child)
        for one in made:
            one.captured = captured.get(one.key, ())
            one.params = one.params + list(one.captured)
        for one in made:
            self.nested_functions(child, one)

    def overload(self, view, fn: cst.FunctionDef, target: str, prefix, call=None) -> None:
        """`@overload(f)` on FN (or `overload(f)(fn)`, CALL being `overload(f)`): the implementation FN returns, a
        device function of f's name, where FN returns one whatever the types; else FN is remembered for the
        message of f's calls."""
        impl = implementation(fn)
        if impl is None:
            view.overloads[target] = (fn.name, f"'{fn.name.value}' picks its implementation by the arguments' "
                                      "types when Numba compiles the call", False)
            return
        name = target if target.isidentifier() else method_c_name(target)  # an array method's key is no name
        if isinstance(impl, cst.Lambda):
            impl = lambda_as_def(impl, cst.Name(name), self.info.reporter)
        options = {"device": cst.Name("True")}
        made_by = call or next((d.decorator for d in fn.decorators if overload_target(view, d.decorator)), None)
        inline = next((a.value for a in getattr(made_by, "args", ()) if a.keyword and a.keyword.value == "inline"),
                      None)
        if inline is not None:  # overload(f, inline="always"): Numba inlines the implementation where f is called
            options["inline"] = inline
        fi = self.register(self.scope_view(view, fn), impl, ([], options), fn, prefix + target, name, None)
        if fi is not None and view is not self.info:  # made in a test method: its kernels call it by that name
            view.functions.maps[0][target] = fi

    def lambda_def(self, assign: cst.Assign) -> cst.FunctionDef:
        """`f = lambda v: expr` in a kernel, read as `def f(v): return expr` (Numba makes the same function of
        it), located where the lambda is."""
        fn = lambda_as_def(assign.value, assign.targets[0].target, self.info.reporter)
        self.info.lambdas[assign.value] = fn
        return fn

    def register(self, view, fn, jit, enclosing, key, name, site, site_view=None) -> FunctionInfo | None:
        first = None
        if self.iteration is not None and self.iteration[2] > 0:  # a later iteration's: a key of its own
            first = self.info.functions.get(key)
            key = f"{key}#{self.iteration[1]}"
        try:
            fi = function_info(view, fn, jit, enclosing, key, name, site, site_view)
        except Unsupported as exc:
            self.defer(view, fn, key, name, exc)
            return None
        fi.scope = view if view is not self.info else None
        if enclosing is not None and view is not self.info:
            fi.scope = at_compile(view, fi, enclosing)
        elif enclosing is None and view is self.info:
            compiled = module_at_compile(view, fi)
            fi.scope = compiled if compiled is not view else None
        self.info.deferred.pop(key, None)
        view.failed_functions.maps[0].pop(name, None)
        self.info.functions[key] = fi  # a second definition of one name replaces the first, as in Python
        if view is not self.info and view.path == self.info.path:  # (a sibling module's table is its own)
            view.functions.maps[0][name] = fi
        if self.iteration is not None and not fi.is_device:  # the kernel of each iteration, under the first's name
            loop, label, k = self.iteration
            if k == 0:
                fi.iterations = [(label, fi)]
                fi.loop = loop
            elif first is not None and first.iterations:
                first.iterations.append((label, fi))
                fi.listed = False
        return fi

    def defer(self, view, fn, key, name, exc: Unsupported) -> None:
        """FN failed where it was made: its error is reported if it is asked for, the rest of the module stands."""
        self.info.deferred[key] = [view.reporter.make(exc.node, exc.construct, exc.message, exc.hint)]
        self.info.deferred_nodes[key] = fn
        view.failed_functions.maps[0][name] = key
        self.info.functions.pop(key, None)

    def bind_global(self, bound, fi) -> None:
        """`global f_gpu` in the function that binds f_gpu: the module's kernels call it by that name."""
        if bound in self.global_names and bound not in self.info.functions:
            self.info.functions[bound] = fi

    def scope_view(self, parent: ModuleInfo, fn: cst.FunctionDef, values: dict | None = None) -> ModuleInfo:
        """The names a function defined inside FN sees: FN's imports, parameters and local constants over PARENT's."""
        child = parent.child()
        binder = Binder(child, fn.name.value, self.sibling)
        binder.bind_parameters(fn, values)
        if isinstance(fn.body, cst.IndentedBlock):
            binder.run(fn.body.body)
            arrays = {n for n in binder.bound if isinstance(child.constants.get(n), ConstArray)}
            child.mutations = array_mutations(child, fn.body, arrays) if arrays else {}
        child.per_call.update(per_call_kinds(child, fn))  # (a constant of the view reads as the constant)
        return child

    def publish(self, child: ModuleInfo) -> None:
        """`globals().update(locals())` in a module-level function: its imports, constants and functions become the
        module's (once it has run, which any kernel using them needs), where the module does not bind them."""
        root = self.info
        for name, qualified in child.aliases.items():
            root.aliases.setdefault(name, qualified)
        for name, value in child.constants.items():
            if name not in root.constants and name not in root.nonconstant:
                root.constants[name] = value
        for name, fi in child.functions.maps[0].items():
            root.functions.setdefault(name, fi)
        for name, entry in child.plain_functions.maps[0].items():
            root.plain_functions.maps[0].setdefault(name, entry)

    # ------------------------------------------------------------ cuda.jit(...)(fn) calls
    def returned_kernel(self, fn, child):
        """(local name, FunctionInfo) of the kernel FN returns, read in CHILD; (name, None) when its decorator
        failed there (it may not with the parameters bound); (None, None) when FN returns no kernel."""
        returned = returned_expression(fn)
        if isinstance(returned, cst.Name):
            made = child.functions.maps[0].get(returned.value)
            failed = returned.value in child.failed_functions.maps[0]
            return (returned.value, made) if made is not None or failed else (None, None)
        if isinstance(returned, cst.Call) and returned in self.made_at:
            made = self.made_at[returned]
            return made.name, made
        return None, None

    def instantiate_factories(self) -> None:
        """`k = factory(3.0)` at module level: the kernel the factory returns, made with its parameters bound."""
        factories = {}
        for fn, child in self.candidates:
            local, template = self.returned_kernel(fn, child)
            if local is not None:
                factories[fn] = (child, local, template)
        for name, value in list(self.info.value_nodes.items()):
            if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
                continue
            entry = self.info.plain_functions.get(value.func.value)
            if entry is None or entry[0] not in factories:
                continue
            fn = entry[0]
            child, local, template = factories[fn]
            bound = bind_call(self.info, fn, value)
            if bound is None:
                continue  # arguments known only by running: the template stays, with its parameters unknown
            if template is not None:
                template.listed = False
            else:  # its decorator needed the parameters: the instance reads it with them
                self.info.deferred.pop(child.failed_functions.maps[0][local], None)
            view = self.scope_view(self.info, fn, bound)
            start = len(self.sites)
            self.walk(view, fn.body.body, fn, f"{name}.")
            self.apply_sites(start)
            _, made = self.returned_kernel(fn, view)
            if made is None:
                continue
            for key, fi in list(self.info.functions.items()):
                if key.startswith(f"{name}.") and not fi.is_device:
                    fi.listed = False  # other kernels the factory makes are not what it returns
            self.info.functions.pop(made.key, None)
            made.name, made.key, made.listed = name, name, True
            made.also_known_as.add(name)
            self.info.functions[name] = made
            self.info.deferred.pop(name, None)


def _blocks(stmt) -> list:
    """The statement lists nested in a compound statement (if/for/while/with/try/match)."""
    out = []
    for attr in ("body", "orelse", "finalbody"):
        part = getattr(stmt, attr, None)
        if isinstance(part, cst.If):
            out += _blocks(part)
        elif part is not None and isinstance(getattr(part, "body", None), (list, tuple)):
            out.append(part.body)
        elif part is not None and isinstance(getattr(getattr(part, "body", None), "body", None), (list, tuple)):
            out.append(part.body.body)
    for handler in getattr(stmt, "handlers", ()) or ():
        out.append(handler.body.body)
    for case in getattr(stmt, "cases", ()) or ():
        out.append(case.body.body)
    return out
