"""--kernel NAMES -> the functions to translate: the module's kernels, or those named (a device function too where
translate writes device code alone); a name that is not one is an error saying why."""

from __future__ import annotations

import libcst as cst

from ..errors import UserError
from ..frontend.decorators import foreign_decorator, vouched_kernel
from ..frontend.module import FunctionInfo, ModuleInfo
from ..frontend.scan import find_nodes


def selected_kernels(info: ModuleInfo, options) -> list[FunctionInfo]:  # options: program.Options
    """The module's kernels, or those --kernel names: by name, by key ("outer.kernel" for one defined in a
    function), or by another name it has (the function cuda.jit(sig)(fn) compiled). A name that is not a kernel
    is an error saying why (its own decorator problem, a device function, a plain function)."""
    kernels = [f for f in info.functions.values() if (not f.is_device or f.ufunc is not None) and f.listed]
    if not options.kernels:
        for key in info.deferred:
            info.report_deferred(key)
        return kernels
    chosen = []
    for want in options.kernels:
        exact = info.functions.get(want)
        if exact is not None and (not exact.is_device or exact.ufunc is not None or options.device_code_alone):
            chosen.append(exact)
            continue
        named = [f for f in kernels if f.name == want] or [f for f in kernels if want in f.also_known_as] \
            or [f for f in kernels if f.key.endswith("." + want)]  # `method.k` of `Class.method.k`
        if not named and options.device_code_alone:
            named = [f for f in info.functions.values() if f.is_device and f.listed and f.ufunc is None
                     and (f.name == want or want in f.also_known_as or f.key.endswith("." + want))]
        if not named and want not in info.deferred:
            vouched = vouched_kernel(info, want)
            if vouched is not None:
                info.functions[want] = vouched
                named = [vouched]
        if len(named) > 1 and options.types:  # one def per case (`def kernel_func(out, a)` or `(out, a, b)`):
            # the one whose parameters --types names
            fitting = [f for f in named if set(f.params) == set(options.types)] or \
                [f for f in named if set(options.types) <= set(f.params)]
            named = fitting if len(fitting) == 1 else named
        if len(named) > 1:
            where = ", ".join(f"{f.key} (line {info.reporter.location(f.node).line})" for f in named)
            raise UserError(f"{info.path}: error: several kernels are named '{want}' here: {where}\n"
                            f"    hint: pass --kernel with one of these names, or --types naming the parameters of one")
        if not named:
            raise why_not_a_kernel(info, want, kernels)
        chosen.append(named[0])
    for fi in chosen:
        info.report_deferred(fi.key)
    return chosen


def why_not_a_kernel(info: ModuleInfo, want: str, kernels: list) -> UserError:
    """The real reason --kernel WANT finds no kernel."""
    failed = [k for k in info.deferred if k == want or k.endswith("." + want)]
    if failed:
        for key in failed:
            info.report_deferred(key)
        return UserError(info.reporter.diagnostics)
    devices = [f for f in info.functions.values() if f.is_device and (f.name == want or want in f.also_known_as)]
    if devices:
        info.reporter.add(devices[0].node.name, f"--kernel {want}", "is a device function "
                          "(cuda.jit(device=True)); it is launched only through the kernels that call it",
                          "name a kernel that calls it; `numba2cuda translate` (C output) writes it alone as a "
                          "__device__ function")
        return UserError(info.reporter.diagnostics)
    plain = info.plain_functions.get(want)
    unbound = unbound_decorator(info, plain[0]) if plain is not None and plain[0].decorators else None
    if unbound is not None:
        dec, head = unbound
        info.reporter.add(dec, f"--kernel {want}", f"its decorator @{info.code(dec)} names '{head}', which this "
                          "module never imports or defines (Python stops here with a NameError)",
                          f"import it: from numba import {head}" if head in ("cuda", "jit") else
                          f"import or define '{head}' before the kernel")
        return UserError(info.reporter.diagnostics)
    if plain is not None and plain[0].decorators:
        foreign = foreign_decorator(info, plain[0])
        dec = plain[0].decorators[0].decorator
        text = info.code(dec)
        why = (f"its decorator @{text} comes from {foreign[2]}, which numba2cuda cannot read without running it"
               if foreign else f"its decorator @{text} does not apply cuda.jit as far as numba2cuda can read")
        info.reporter.add(dec, f"--kernel {want}", why,
                          "translate with --import-module (numba2cuda then imports the module and finds the kernels "
                          "it makes, however made), or decorate it with @cuda.jit")
        return UserError(info.reporter.diagnostics)
    if plain is not None:
        info.reporter.add(plain[0].name, f"--kernel {want}", "this function is not compiled with cuda.jit here",
                          f"decorate it with @cuda.jit, or compile it with {want}_gpu = cuda.jit(signature)({want})")
        return UserError(info.reporter.diagnostics)
    if info.reporter.diagnostics:
        return UserError(info.reporter.diagnostics)
    nested = [fn for fn in find_nodes(info.module, lambda n: isinstance(n, cst.FunctionDef) and n.name.value == want)
              if fn.decorators]
    if nested:  # inside a class or function, under a decorator only running makes (spinsim's self.jit_host(...))
        dec = nested[0].decorators[0].decorator
        info.reporter.add(dec, f"--kernel {want}", f"'{want}' is defined here under @{info.code(dec)}, which "
                          "numba2cuda does not read as cuda.jit (a decorator that code makes when it runs)",
                          "decorate it with @cuda.jit, or make the kernel where the module's import makes it "
                          "and translate with --import-module")
        return UserError(info.reporter.diagnostics)
    names = ", ".join(sorted({f.key if f.key != f.name else f.name for f in kernels})) or "none"
    failed = sorted(k.rsplit(".", 1)[-1] for k in info.deferred)
    if failed:
        names += f"; with a problem in their decorator: {', '.join(failed)}"
    ran = "; ".join(f"'{r['entry']}' {r['outcome']}" for r in (info.imported or ({},))[0].get("runs", [])[:3])
    hint = (f"the import mode could not import the module ({info.import_failed.message}), and nothing in the "
            "source compiles it with cuda.jit" if info.import_failed is not None else
            "a kernel the module makes when it runs (a factory called with computed arguments, a decorator "
            "numba2cuda cannot read) is found with --import-module") if info.imported is None else \
        ("importing the module did not make it: a kernel made inside a function (a test method, a factory called "
         "there) exists only when that function runs" + (f"; the import mode ran {ran}, and none made it" if ran
                                                          else ", and no test or main() here reaches it") +
         "; make it at module level to translate it")
    return UserError(f"{info.path}: error: no kernel named {want} (kernels here: {names})\n    hint: {hint}")


def unbound_decorator(info: ModuleInfo, fn):
    """(decorator node, its first name) when the module binds that name nowhere (a notebook cell saved without
    its imports), else None."""
    import builtins

    dec = fn.decorators[0].decorator
    head = dec.func if isinstance(dec, cst.Call) else dec
    while isinstance(head, cst.Attribute):
        head = head.value
    if not isinstance(head, cst.Name) or info.star_imports or hasattr(builtins, head.value):
        return None
    tables = (info.aliases, info.constants, info.nonconstant, info.functions, info.plain_functions,
              info.value_nodes, info.failed_functions)
    return None if any(head.value in t for t in tables) else (dec, head.value)
