"""`cuda.jit(sig)(fn)`, `cuda.jit(fn, device=True)`, `f_gpu = cuda.jit(device=True)(f)`, `numba.njit(f)`,
`overload(f)(impl)` wherever a module writes them -> the kernels and device functions those calls make, found in
its statements (the sites) and applied once every plain function of the scope is known."""

from __future__ import annotations

import libcst as cst

from ..errors import Unsupported
from .decorators import function_info, jit_parts
from .jitoptions import is_jit_name
from .names import dotted, resolve
from .overloads import overload_target
from .siblings import adopt
from .ufuncs import names_cpu_jit


# numba-cuda's ahead-of-time compilers -> whether they compile a device function unless told device=
COMPILE_CALLS = {"cuda.compile_ptx": False, "cuda.compile_ptx_for_current_device": False, "cuda.compile": True,
                 "cuda.compile_for_current_device": True, "cuda.compile_all": True}
_COMPILE_OPTIONS = ("device", "fastmath", "lineinfo", "debug", "opt")


def _compiled(call: cst.Call, device_by_default: bool) -> tuple:
    """`cuda.compile_ptx(f, sig, device=..., ...)` (numba-cuda's compiler and cache-hint tests) as the cuda.jit
    that compiles f alike: its signature, and the options a kernel has (abi=, cc=, output= say how the code is
    given back, which a translation does not concern)."""
    kwargs = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    positional = [a.value for a in call.args[1:] if a.keyword is None]
    sig = positional[0] if positional else kwargs.get("sig")
    options = {k: v for k, v in kwargs.items() if k in _COMPILE_OPTIONS}
    options.setdefault("device", cst.Name(str(device_by_default)))
    return ([sig] if sig is not None else []), options


class JitCallSites:
    """Mixed into the Discoverer: the calls that apply cuda.jit (or numba.jit, or overload) to a function."""

    def find_sites(self, view, stmt: cst.SimpleStatementLine, prefix) -> None:
        for small in stmt.body:
            bound = None
            value = getattr(small, "value", None)
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target,
                                                                                         cst.Name):
                bound = small.targets[0].target.value
            if not isinstance(value, cst.BaseExpression):
                continue
            made = value
            if isinstance(value, cst.IfExp) and _is_none(value.orelse) != _is_none(value.body):
                # `f_gpu = cuda.jit(device=True)(f) if cuda else None`: a kernel calling f_gpu compiles only where
                # it is the device function (calling None fails), so the name is bound to it
                made = value.orelse if _is_none(value.body) else value.body
            finder = _CallFinder()
            value.visit(finder)
            for call in finder.calls:
                self.sites.append((view, call, bound if call is made else None, prefix))

    def apply_sites(self, start: int) -> None:
        for site in self.sites[start:]:
            self.apply_site(*site)

    def apply_site(self, view, call: cst.Call, bound, prefix) -> None:
        """`cuda.jit(sig)(fn)` or `cuda.jit(fn, ...)`: fn (a plain function in scope) becomes a kernel."""
        target = overload_target(view, call.func)
        if target is not None and len(call.args) == 1 and isinstance(call.args[0].value, cst.Name) \
                and call.args[0].value.value in view.plain_functions:  # overload(f)(impl_chooser)
            self.overload(view, view.plain_functions[call.args[0].value.value][0], target, prefix, call.func)
            return
        if target is not None:  # overload(f)(impl) of an impl numba2cuda cannot read (a factory's parameter)
            view.overloads[target] = (call, "its implementation is a value only running the module gives", False)
            return
        if bound and call.args and isinstance(call.args[0].value, cst.Name) and call.args[0].keyword is None \
                and names_cpu_jit(view, call.func) and call.args[0].value.value in view.plain_functions:
            # `njit_f = numba.njit(f)`, `njit(cache=True)(f)`: a CPU dispatcher, which a kernel calls as a device
            # function (numba-cuda's cpu_gpu_compat), typed by the call
            jit = ([], {"device": cst.Name("True")})
            fn_name = call.args[0].value.value
        elif isinstance(call.func, cst.Call) and len(call.args) == 1 and isinstance(call.args[0].value, cst.Name):
            jit = jit_parts(view, call.func)
            fn_name = call.args[0].value.value
        elif isinstance(call.func, cst.Call) and len(call.args) == 1 and self.sibling_plain(view, call.args[0].value):
            jit = jit_parts(view, call.func)  # cuda.jit(sig, device=True)(my.corrcoef) of a module next to the file
            fn_name = dotted(call.args[0].value)
        elif call.args and isinstance(call.args[0].value, cst.Name) and call.args[0].keyword is None and \
                is_jit_name(view, call.func) and call.args[0].value.value in view.plain_functions:
            jit = ([a.value for a in call.args[1:] if a.keyword is None],
                   {a.keyword.value: a.value for a in call.args if a.keyword is not None})
            fn_name = call.args[0].value.value
        elif call.args and isinstance(call.args[0].value, cst.Name) and call.args[0].keyword is None \
                and (device := COMPILE_CALLS.get(resolve(view, call.func))) is not None \
                and call.args[0].value.value in view.plain_functions:
            jit = _compiled(call, device)
            fn_name, bound = call.args[0].value.value, None  # what it returns is PTX or LTO-IR, not a kernel
        elif len(call.args) >= 1 and isinstance(call.func, cst.Name) and call.func.value in view.plain_functions \
                and isinstance(call.args[0].value, cst.Name) and call.args[0].keyword is None \
                and call.args[0].value.value in view.plain_functions:
            jit = jit_parts(view, call.func)  # jit(fn): a project's decorator called on the function
            if jit is not None:
                jit = (jit[0], {**jit[1], **{a.keyword.value: a.value for a in call.args if a.keyword}})
            fn_name = call.args[0].value.value
        elif len(call.args) == 1 and isinstance(call.func, cst.Name) and call.func.value in view.value_nodes \
                and isinstance(call.args[0].value, cst.Name) and call.args[0].keyword is None \
                and call.args[0].value.value in view.plain_functions:
            jit = jit_parts(view, call.func)  # dec = cuda.jit(sig); kernel = dec(fn)
            fn_name = call.args[0].value.value
        else:
            return
        entry = view.plain_functions.get(fn_name)
        jitted = view.functions.get(fn_name) if entry is None and jit is not None else None
        if jitted is not None and jitted.is_device and bound and jit[1].get("device") is not None:
            # gpu_f = cuda.jit(device=True)(f) of an @numba.jit f (a CPU dispatcher): the same device function
            jitted.also_known_as.add(bound)
            view.functions[bound] = jitted  # a ChainMap (a function's scope) takes it in its own map
            self.bind_global(bound, jitted)
            return
        if jit is None or entry is None:
            return
        fn, fn_view, fn_prefix = entry
        name = bound if bound and view is self.info else fn_name
        key = name if fn_view is self.info else f"{fn_prefix}{name}"
        existing = self.info.functions.get(key)
        if existing is not None and existing.node is fn and existing.signatures:
            try:  # another signature for the same function: Numba's dispatcher holds both
                extra = function_info(fn_view, fn, jit, existing.enclosing, key, name, call, view)
            except Unsupported:
                extra = None
            if extra is not None and extra.signatures and extra.is_device == existing.is_device:
                existing.notices += [n for n in extra.notices if n not in existing.notices]
                existing.signatures += [s for s in extra.signatures if s not in existing.signatures]
                existing.also_known_as |= {fn_name, bound} - {None}
                self.made_at[call] = existing
                return
        fi = self.register(fn_view, fn, jit, None, key, name, call, view)
        if fi is not None:
            self.nested_functions(fn_view, fi)  # its own `def inner` too, as for the decorator's spelling
            fi.also_known_as |= {fn_name, bound} - {None}
            self.made_at[call] = fi
            if bound and view is not self.info and view is not fn_view:
                view.functions.maps[0][bound] = fi
            elif bound and fn_view.path != self.info.path:  # `f = cuda.jit(f, device=True)` of an imported f
                self.info.functions[bound] = fi
            if bound and view is not self.info and fi.is_device:
                self.bind_global(bound, fi)

    def sibling_plain(self, view, node) -> bool:
        """Whether NODE is `mod.f`, a plain function of a module next to the file that `import mod` (or `import
        helpers as mod`) names; if so it is in VIEW's plain functions as `mod.f`, read from its own file."""
        if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)) or self.sibling is None:
            return False
        qualified = view.aliases.get(node.value.value)
        module = self.sibling(qualified, 0) if qualified and not qualified.startswith(".") else None
        plain = module.plain_functions.get(node.attr.value) if module is not None else None
        if plain is None or node.attr.value in module.functions:
            return False
        adopt(view.module_info, module)
        view.plain_functions.maps[0][dotted(node)] = (plain[0], plain[1], f"{module.path}:")
        return True

    # ------------------------------------------------------------ factories


class _CallFinder(cst.CSTVisitor):
    """Calls in an expression, not inside lambdas."""

    def __init__(self):
        super().__init__()
        self.calls: list = []

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_Call(self, node) -> bool:
        self.calls.append(node)
        return True


def _is_none(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"
