"""A decorator, or the callee of `callee(fn)` -> the cuda.jit it applies (however spelled: cuda.jit, a name bound to it,
a project's own decorator function); a function and that jit -> its FunctionInfo (signatures, options, notes)."""

from __future__ import annotations

import libcst as cst

from ..errors import Unsupported
from ..ir import typesys as T
from .info import FunctionInfo, ModuleInfo
from .jitoptions import argtypes_signature, is_jit_name, read_options, read_signatures, type_text
from .names import resolve
from .scan import find_nodes, names_bound_anywhere

_MAX_DEPTH = 6  # decorators that wrap decorators: deeper than this is not followed


# ------------------------------------------------------------------ what makes a jit

def cuda_jit_arm(info: ModuleInfo, values: list):
    """The one value among VALUES (a name's binding on each arm of an `if`) that is a cuda.jit, where every other
    arm binds it to something else (`jit(inline='always')` where no GPU is found); else None. A kernel calls only
    what cuda.jit compiles, so that arm is the one its decorator means."""
    if any(v is None for v in values):
        return None
    arms = [v for v in values if jit_parts(info, v) is not None]
    return arms[0] if len(arms) == 1 and len(values) > 1 else None


def jit_parts(info: ModuleInfo, expr, depth: int = 0):
    """(positional args, keyword args) of the cuda.jit an expression applies, or None if it applies none.

    `expr` is a decorator expression (or the callee of `callee(fn)`): cuda.jit, cuda.jit(...), a name bound to
    one, or a call of a project's decorator function."""
    if depth > _MAX_DEPTH:
        return None
    call = expr if isinstance(expr, cst.Call) else None
    target = call.func if call is not None else expr
    if is_jit_name(info, target):
        return ([], {}) if call is None else _call_args(call)
    if not isinstance(target, cst.Name):
        return None
    name = target.value
    bound = info.value_nodes.get(name)
    if bound is not None:  # gpu_jit = cuda.jit(fastmath=True), or jit = cuda.jit
        inner = jit_parts(info, bound, depth + 1)
        if inner is None:
            return None
        if call is None:
            return inner
        if isinstance(bound, cst.Call):
            return None  # calling what cuda.jit(...) returned: that is applying it to a function, not a decorator
        args, kwargs = _call_args(call)
        return inner[0] + args, {**inner[1], **kwargs}
    entry = info.plain_functions.get(name)
    if entry is None:
        return None
    return _project_decorator(info, entry[0], entry[1], call, depth)


def _call_args(call: cst.Call):
    args = [a.value for a in call.args if a.keyword is None and not a.star]
    kwargs = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    return _positional_first(args, kwargs)


def _positional_first(args, kwargs):
    """cuda.jit's arguments with its first parameter given by its name (a ray tracer's `cuda.jit(func_or_sig=None,
    device=True)`, a decorator factory's `cuda.jit(func_or_sig=signature, ...)`) moved to its place."""
    kwargs = dict(kwargs)
    first = kwargs.pop("func_or_sig", None)
    if first is not None and not args and not (isinstance(first, cst.Name) and first.value == "None"):
        args = [first]
    if args and isinstance(args[0], cst.Name) and args[0].value == "None":
        args = args[1:]  # `cuda.jit(None, device=True)`: no signature, as func_or_sig=None says
    return args, kwargs


def _project_decorator(info, fn: cst.FunctionDef, fn_view, call, depth):
    """`@D` where D(f) returns cuda.jit(...)(f), or `@D(x)` where D(x) returns cuda.jit(...) or a function that
    applies it: the cuda.jit's arguments, D's parameters replaced by the decorator's arguments."""
    ret = returned_expression(fn)
    if ret is None:
        return None
    params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)]
    env = {}
    if call is not None:
        args, kwargs = _call_args(call)
        env = dict(zip(params, args))
        env.update({k: v for k, v in kwargs.items() if k in params})
        env["*"] = (args[len(params):], {k: v for k, v in kwargs.items() if k not in params})
    applied = isinstance(ret, cst.Call) and isinstance(ret.func, cst.Call) and is_jit_name(fn_view, ret.func.func)
    if call is None:  # @D: D(f) must apply cuda.jit to its parameter f
        if applied and _is_param(ret, params[:1]):
            return _substitute(fn_view, ret.func, {}, params)
        if isinstance(ret, cst.Call) and is_jit_name(fn_view, ret.func) and ret.args and \
                isinstance(ret.args[0].value, cst.Name) and ret.args[0].value.value == params[0]:
            args, kwargs = _substitute(fn_view, ret, {}, params)
            return args[1:], kwargs
        return None
    if isinstance(ret, cst.Call) and is_jit_name(fn_view, ret.func):  # D(sig) returns cuda.jit(sig, ...)
        return _substitute(fn_view, ret, env, params)
    if isinstance(ret, cst.Name):  # D(sig) returns an inner decorator that applies cuda.jit
        inner = next((s for s in body_of(fn) if isinstance(s, cst.FunctionDef) and s.name.value == ret.value), None)
        inner_ret = returned_expression(inner) if inner is not None else None
        inner_params = [p.name.value for p in inner.params.params] if inner is not None else []
        if isinstance(inner_ret, cst.Call) and isinstance(inner_ret.func, cst.Call) and \
                is_jit_name(fn_view, inner_ret.func.func) and _is_param(inner_ret, inner_params[:1]):
            return _substitute(fn_view, inner_ret.func, env, params)
    if isinstance(ret, cst.Call) and depth < _MAX_DEPTH:  # D(sig) returns another decorator's result
        inner = jit_parts(fn_view, ret, depth + 1)
        if inner is not None:
            return [env.get(a.value, a) if isinstance(a, cst.Name) else a for a in inner[0]], \
                {k: env.get(v.value, v) if isinstance(v, cst.Name) else v for k, v in inner[1].items()}
    return None


def _is_param(call: cst.Call, names) -> bool:
    return len(call.args) == 1 and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value in names


def _substitute(view, call: cst.Call, env: dict, params) -> tuple:
    args, kwargs = [], {}
    extra_args, extra_kwargs = env.get("*", ([], {}))
    for a in call.args:
        value = a.value
        if isinstance(value, cst.Name) and value.value in env:
            value = env[value.value]
        if a.star == "*":
            args.extend(extra_args)
        elif a.star == "**":
            kwargs.update(extra_kwargs)
        elif a.keyword is None:
            args.append(value)
        else:
            kwargs[a.keyword.value] = value
    return _positional_first(args, kwargs)


def body_of(fn: cst.FunctionDef) -> list:
    return list(fn.body.body) if isinstance(fn.body, cst.IndentedBlock) else []


def returned_expression(fn: cst.FunctionDef | None):
    """The expression of a function's last top-level `return`, or None."""
    if fn is None:
        return None
    for stmt in reversed(body_of(fn)):
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Return):
                    return small.value
    return None


# ------------------------------------------------------------------ one function

def function_info(view: ModuleInfo, fn: cst.FunctionDef, jit, enclosing, key: str, name: str | None = None,
                  site=None, site_view: ModuleInfo | None = None) -> FunctionInfo:
    """The FunctionInfo of FN (whose names VIEW holds) compiled by a cuda.jit with arguments JIT, read in SITE_VIEW
    (where the cuda.jit is written: a test method's `cuda.jit(sig)(fn)`; default VIEW)."""
    if fn.asynchronous is not None:
        raise Unsupported(fn, "async def", "kernels and device functions cannot be coroutines", "write a plain def")
    args, kwargs = jit
    at = site_view or view
    notes: list = []
    refused: list = []
    options = read_options(at, kwargs, notes, refused)
    is_device = bool(options.get("device"))
    result_name = at.code(args[0]).rsplit(".", 1)[-1] if args else ""
    if len(args) > 1 and (result_name == "void" or T.scalar_by_name(result_name) is not None):
        # `@cuda.jit(void, int32[::1])`: cuda.jit's second argument is device=, so Numba rejects it too
        types = ", ".join(at.code(a) for a in args[1:])
        raise Unsupported(args[0], "signature", f"cuda.jit takes one signature; '{at.code(args[0])}, {types}' gives "
                          "it the result type and the argument types apart", f"write @cuda.jit({at.code(args[0])}"
                          f"({types}))")
    unread = ()
    try:
        signatures = read_signatures(at, args[0], site) if args else []
    except Unsupported:
        unknown = _known_only_when_run(at, args[0])
        why = at.nonconstant.get(unknown) if unknown else _decorator_local(at, args[0])
        if not why:
            raise
        unknown = unknown or args[0].value
        # `cuda.jit((arytype, arytype))(func)` in a helper: the types exist only when the helper is called, so
        # they come from --types (the error for a kernel without types says how), as for a kernel without any
        signatures = []
        # a module-level value: importing the module gives it; a helper's parameter: only its call does
        unread = (f"'{unknown}', which {why}", at is at.module_info and unknown in at.nonconstant)
        notes.append((args[0], "signature", f"'{unknown}' {why}; the types come from --types or NUMBA2CUDA_TYPES "
                      "instead"))
    if refused and signatures and not is_device:  # a kernel's signature compiles it where it is made: it fails
        raise refused[0]                           # there (a device function's compile takes no such option)
    if not args and "argtypes" in kwargs:
        signatures = [argtypes_signature(at, kwargs)]
        notes.append((kwargs["argtypes"], "@cuda.jit(argtypes=...)", "read as the signature (numba-cuda now asks "
                      "for the signature as the first argument)"))
    params_node = fn.params
    if params_node.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params_node.star_kwarg or \
            params_node.kwonly_params:
        raise Unsupported(fn.name, "*args/**kwargs", "kernels take a fixed list of positional parameters")
    params = [p.name.value for p in params_node.posonly_params] + [p.name.value for p in params_node.params]
    defaults = {p.name.value: p.default for p in params_node.params if p.default is not None}
    if defaults and not is_device:  # Numba compiles an omitted argument in; a C launch passes every one
        first = next(p for p in params_node.params if p.default is not None)
        notes.append((first.default, f"default value of '{first.name.value}'", "a launch of the translation "
                      "passes every argument (the launcher does not fill in defaults)"))
    annotations, failed = {}, []
    for p in list(params_node.posonly_params) + list(params_node.params):
        if p.annotation is None:
            continue
        text = type_text(view, p.annotation.annotation)
        try:
            annotations[p.name.value] = T.parse_type(text)
        except T.TypeStringError as exc:
            failed.append((p, exc))
    for p, exc in failed:
        # among parameters annotated with Numba types, a string that does not parse was meant as one too
        meant = annotations and isinstance(p.annotation.annotation, (cst.SimpleString, cst.ConcatenatedString))
        if meant or _looks_like_numba_type(view, p.annotation.annotation):
            raise Unsupported(p.annotation, "type annotation", str(exc)) from None
        notes.append((p.annotation, f"annotation '{view.code(p.annotation.annotation)}'",
                      "not a Numba type; ignored, as Numba ignores annotations"))
    for sig in signatures:
        where = args[0] if args else kwargs.get("argtypes", fn.name)
        if len(sig[1]) != len(params):
            raise Unsupported(where, "signature", f"has {len(sig[1])} argument types for {len(params)} parameters")
        if not is_device and sig[0] not in (None, T.VOID):
            raise Unsupported(where, "signature", "a kernel must return void", "use 'void(...)'")
    if is_device and len(signatures) > 1:
        raise Unsupported(args[0], "several signatures on a device function",
                          "a device function is compiled for the argument types each call passes",
                          "keep one signature, or remove it")
    fi = FunctionInfo(name or fn.name.value, fn, is_device, params, signatures[0] if signatures else None,
                      annotations, options, enclosing, key=key, signatures=signatures, site=site, defaults=defaults)
    fi.notices = [view.reporter.make(node, construct, message) for node, construct, message in notes]
    fi.unread_signature = unread
    if refused:
        if is_device:  # numba-cuda's device compile never reads it
            fi.notices += [view.reporter.make(u.node, u.construct, "ignored: numba-cuda compiles a device function "
                                              "without it (cuda.jit has no such option)") for u in refused]
        else:
            fi.launch_refusal = refused[0]
            fi.call_notices = [view.reporter.make(u.node, u.construct, "ignored where a kernel calls this function: "
                                                  "numba-cuda compiles it there as a device function, without the "
                                                  "option (launching it would raise TypeError)") for u in refused]
    fi.also_known_as = {fn.name.value, fi.name}
    return fi


def _looks_like_numba_type(view, node) -> bool:
    """An annotation that means to be a Numba type (a string, or a name from numba) but does not parse."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        # "float32[:, ::1]" means a Numba type; "DeviceNDArray" (a forward reference to a Python class) does not
        text = node.evaluated_value if isinstance(node.evaluated_value, str) else ""
        name = text.strip().split("[", 1)[0].split("(", 1)[0].strip()
        return any(c in text for c in "[(") or T.scalar_by_name(name) is not None
    base = node.value if isinstance(node, cst.Subscript) else node
    canon = resolve(view, base) or ""
    if ".cudadrv." in canon or canon.endswith("DeviceNDArray"):  # a Python class of numba's driver, not a type
        return False
    return canon.startswith(("numba.", "cuda.")) or (
        isinstance(base, cst.Name) and base.value in ("float32", "float64", "int32", "int64"))


# ------------------------------------------------------------------ a kernel --kernel vouches for

_THREAD_INDEX = {"cuda.grid", "cuda.gridsize", "cuda.threadIdx", "cuda.blockIdx", "cuda.blockDim", "cuda.gridDim"}


def foreign_decorator(info: ModuleInfo, fn: cst.FunctionDef) -> tuple | None:
    """(decorator node, its text, the module it comes from) when FN's decorator is imported from a module
    numba2cuda cannot read (a project's installed package: fbpic's @compile_cupy), else None."""
    if not fn.decorators:
        return None
    dec = fn.decorators[0].decorator
    text = info.code(dec)
    origin = info.aliases.get(text.split("(")[0].split(".")[0])
    if not origin or origin.startswith(("numba", "numpy", "math")):
        return None
    return dec, text, origin.rsplit(".", 1)[0] or origin


def vouched_kernel(info: ModuleInfo, name: str) -> FunctionInfo | None:
    """A module-level function --kernel NAME names that numba2cuda does not see compiled as a kernel, returning
    nothing: translated as `@cuda.jit` would compile it, with a note. Two cases: its decorator comes from a
    package numba2cuda cannot read (fbpic's @compile_cupy; its arguments, if any, are not read) and its body
    indexes CUDA threads as only a kernel does; or it has no decorator and indexes threads or is handed to
    something (a helper that calls cuda.jit(func), as numba-cuda's own tests do). The user asked for it by name;
    what the module really does with it is what --import-module finds out."""
    entry = info.plain_functions.get(name)
    if entry is None or entry[2] != "" or len(entry[0].decorators) > 1:
        return None
    fn = entry[0]
    foreign = foreign_decorator(info, fn)
    if (fn.decorators and foreign is None) or _returns_value(fn):
        return None
    if not (_indexes_threads(info, fn) or (foreign is None and _passed_as_a_value(info, name))):
        return None
    fi = function_info(info, fn, ([], {}), None, name)
    if foreign is not None:
        dec, text, origin = foreign
        fi.notices.append(info.reporter.make(dec, f"@{text}", f"comes from {origin}, which numba2cuda cannot read "
                                             "without running it; taken to compile a kernel as @cuda.jit does, since "
                                             f"--kernel {name} names it (--import-module reads what it really does)"))
    else:
        fi.notices.append(info.reporter.make(fn.name, f"--kernel {name}", "this function is not compiled with "
                                             "cuda.jit where numba2cuda can see it; translated as @cuda.jit would "
                                             "compile it, since --kernel names it"))
    return fi


def _passed_as_a_value(info: ModuleInfo, name: str) -> bool:
    """Whether the module hands the function NAME to something (`run(self, set_a)`, `(f, g)`, `cuda.jit(f)`)
    rather than only calling it: where numba-cuda's tests compile their kernels."""
    found = []

    class V(cst.CSTVisitor):
        def visit_Call(self, node) -> bool:
            for arg in node.args:
                arg.visit(self)
            if not isinstance(node.func, cst.Name):
                node.func.visit(self)
            return False

        def visit_FunctionDef(self, node) -> bool:
            node.body.visit(self)
            return False

        def visit_Name(self, node) -> None:
            if node.value == name:
                found.append(node)

    info.module.visit(V())
    return bool(found)


def _returns_value(fn: cst.FunctionDef) -> bool:
    return bool(find_nodes(fn, lambda n: isinstance(n, cst.Return) and n.value is not None, first=True,
                           enter=lambda n: n is fn or not isinstance(n, cst.FunctionDef)))


def _indexes_threads(info: ModuleInfo, fn: cst.FunctionDef) -> bool:
    return bool(find_nodes(fn.body, lambda n: isinstance(n, cst.Attribute) and resolve(info, n) in _THREAD_INDEX,
                           first=True))


def _decorator_local(view: ModuleInfo, node) -> str | None:
    """Why the signature NODE is known only when a project's decorator runs: a local variable of its body (a ray
    tracer's `signature` built from the function's annotations), which the module itself does not bind."""
    if isinstance(node, cst.Name) and node.value not in view.constants and node.value not in view.value_nodes \
            and node.value not in view.aliases and node.value in names_bound_anywhere(view.module_info.module):
        return "is computed when the decorator that applies cuda.jit runs"
    return None


def _known_only_when_run(view: ModuleInfo, node) -> str | None:
    """A name the signature NODE uses whose value only running the module (or calling a function) gives: one
    computed by a call, or a loop's (`for sig in cases: cuda.jit(sig)(f)`)."""
    if isinstance(node, cst.Name) and isinstance(view.value_nodes.get(node.value), cst.BaseExpression):
        node = view.value_nodes[node.value]
    names = find_nodes(node, lambda n: isinstance(n, cst.Name) and n.value in view.nonconstant, first=True)
    return names[0].value if names else None
