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
from ..ir import typesys as T
from .bindings import Binder, array_mutations
from .constants import ConstArray, ConstEvalError, const_eval
from .info import FunctionInfo, ModuleInfo
from .jitoptions import argtypes_signature, is_jit_name, read_options, read_signatures, type_text
from .names import resolve

_MAX_DEPTH = 6  # decorators that wrap decorators: deeper than this is not followed


# ------------------------------------------------------------------ what makes a jit

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
    return [a.value for a in call.args if a.keyword is None and not a.star], \
        {a.keyword.value: a.value for a in call.args if a.keyword is not None}


def _project_decorator(info, fn: cst.FunctionDef, fn_view, call, depth):
    """`@D` where D(f) returns cuda.jit(...)(f), or `@D(x)` where D(x) returns cuda.jit(...) or a function that
    applies it: the cuda.jit's arguments, D's parameters replaced by the decorator's arguments."""
    ret = _returned(fn)
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
        inner = next((s for s in _body(fn) if isinstance(s, cst.FunctionDef) and s.name.value == ret.value), None)
        inner_ret = _returned(inner) if inner is not None else None
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
    return args, kwargs


def _body(fn: cst.FunctionDef) -> list:
    return list(fn.body.body) if isinstance(fn.body, cst.IndentedBlock) else []


def _returned(fn: cst.FunctionDef | None):
    """The expression of a function's last top-level `return`, or None."""
    if fn is None:
        return None
    for stmt in reversed(_body(fn)):
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Return):
                    return small.value
    return None


# ------------------------------------------------------------------ one function

def function_info(view: ModuleInfo, fn: cst.FunctionDef, jit, enclosing, key: str, name: str | None = None,
                  site=None) -> FunctionInfo:
    """The FunctionInfo of FN compiled by a cuda.jit with arguments JIT (read in VIEW, where it is written)."""
    args, kwargs = jit
    notes: list = []
    options = read_options(view, kwargs, notes)
    is_device = bool(options.get("device"))
    signatures = read_signatures(view, args[0]) if args else []
    if not args and "argtypes" in kwargs:
        signatures = [argtypes_signature(view, kwargs)]
        notes.append((kwargs["argtypes"], "@cuda.jit(argtypes=...)", "read as the signature (numba-cuda now asks "
                      "for the signature as the first argument)"))
    params_node = fn.params
    if params_node.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params_node.star_kwarg or \
            params_node.kwonly_params:
        raise Unsupported(fn.name, "*args/**kwargs", "kernels take a fixed list of positional parameters")
    params = [p.name.value for p in params_node.posonly_params] + [p.name.value for p in params_node.params]
    for p in list(params_node.params):
        if p.default is not None:
            raise Unsupported(p, "default parameter value", "kernels and device functions cannot have defaults",
                              "pass the value explicitly at every call")
    annotations = {}
    for p in list(params_node.posonly_params) + list(params_node.params):
        if p.annotation is None:
            continue
        text = type_text(view, p.annotation.annotation)
        try:
            annotations[p.name.value] = T.parse_type(text)
        except T.TypeStringError as exc:
            if _looks_like_numba_type(view, p.annotation.annotation):
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
                      annotations, options, enclosing, key=key, signatures=signatures, site=site)
    fi.notices = [view.reporter.make(node, construct, message) for node, construct, message in notes]
    fi.also_known_as = {fn.name.value, fi.name}
    return fi


def _looks_like_numba_type(view, node) -> bool:
    """An annotation that means to be a Numba type (a string, or a name from numba) but does not parse."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        return True
    base = node.value if isinstance(node, cst.Subscript) else node
    canon = resolve(view, base) or ""
    return canon.startswith(("numba.", "cuda.")) or (
        isinstance(base, cst.Name) and base.value in ("float32", "float64", "int32", "int64"))


# ------------------------------------------------------------------ the walk

class Discoverer:
    """Walks the module once for definitions (with a scope view per enclosing function), then applies the
    cuda.jit calls and the factory calls it saw."""

    def __init__(self, info: ModuleInfo, sibling=None):
        self.info = info
        self.sibling = sibling
        self.sites: list = []  # (view, call, bound name, key prefix)
        self.made_at: dict = {}  # cuda.jit(...)(fn) call -> the FunctionInfo it made
        self.candidates: list = []  # (def, its scope view): functions that may be kernel factories
        info.plain_functions = ChainMap(info.plain_functions)
        info.failed_functions = ChainMap(info.failed_functions)

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
            else:
                for block in _blocks(stmt):
                    self.walk(view, block, enclosing, prefix)

    def definition(self, view, fn: cst.FunctionDef, enclosing, prefix) -> None:
        name = fn.name.value
        jit = site = None
        for dec in fn.decorators:
            jit = jit_parts(view, dec.decorator)
            if jit is not None:
                site = dec
                break
        if jit is None:
            view.plain_functions.maps[0][name] = (fn, view, prefix)
            if isinstance(fn.body, cst.IndentedBlock):
                child = self.scope_view(view, fn)
                self.walk(child, fn.body.body, fn, f"{prefix}{name}.")
                self.candidates.append((fn, child))
                if view is self.info and _publishes_locals(fn):
                    self.publish(child)
            return
        self.register(view, fn, jit, enclosing, prefix + name, name, site)

    def register(self, view, fn, jit, enclosing, key, name, site) -> FunctionInfo | None:
        try:
            fi = function_info(view, fn, jit, enclosing, key, name, site)
        except Unsupported as exc:
            diag = view.reporter.make(exc.node, exc.construct, exc.message, exc.hint)
            self.info.deferred[key] = [diag]
            self.info.deferred_nodes[key] = fn
            view.failed_functions.maps[0][name] = key
            self.info.functions.pop(key, None)
            return None
        fi.scope = view if view is not self.info else None
        if enclosing is not None and view is not self.info:
            fi.scope = _at_compile(view, fi, enclosing)
        self.info.deferred.pop(key, None)
        view.failed_functions.maps[0].pop(name, None)
        self.info.functions[key] = fi  # a second definition of one name replaces the first, as in Python
        if view is not self.info:
            view.functions.maps[0][name] = fi
        return fi

    def scope_view(self, parent: ModuleInfo, fn: cst.FunctionDef, values: dict | None = None) -> ModuleInfo:
        """The names a function defined inside FN sees: FN's imports, parameters and local constants over PARENT's."""
        child = parent.view(aliases=dict(parent.aliases), constants=dict(parent.constants),
                            nonconstant=dict(parent.nonconstant), value_nodes=dict(parent.value_nodes), history={},
                            needs_run=set(parent.needs_run), functions=ChainMap({}, parent.functions),
                            failed_functions=ChainMap({}, parent.failed_functions),
                            plain_functions=ChainMap({}, parent.plain_functions))
        binder = Binder(child, fn.name.value, self.sibling)
        binder.bind_parameters(fn, values)
        if isinstance(fn.body, cst.IndentedBlock):
            binder.run(fn.body.body)
            arrays = {n for n in binder.bound if isinstance(child.constants.get(n), ConstArray)}
            child.mutations = array_mutations(child, fn.body, arrays) if arrays else {}
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
    def find_sites(self, view, stmt: cst.SimpleStatementLine, prefix) -> None:
        for small in stmt.body:
            bound = None
            value = getattr(small, "value", None)
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target,
                                                                                         cst.Name):
                bound = small.targets[0].target.value
            if not isinstance(value, cst.BaseExpression):
                continue
            finder = _CallFinder()
            value.visit(finder)
            for call in finder.calls:
                self.sites.append((view, call, bound if call is value else None, prefix))

    def apply_sites(self, start: int) -> None:
        for site in self.sites[start:]:
            self.apply_site(*site)

    def apply_site(self, view, call: cst.Call, bound, prefix) -> None:
        """`cuda.jit(sig)(fn)` or `cuda.jit(fn, ...)`: fn (a plain function in scope) becomes a kernel."""
        if isinstance(call.func, cst.Call) and len(call.args) == 1 and isinstance(call.args[0].value, cst.Name):
            jit = jit_parts(view, call.func)
            fn_name = call.args[0].value.value
        elif call.args and isinstance(call.args[0].value, cst.Name) and call.args[0].keyword is None and \
                is_jit_name(view, call.func) and call.args[0].value.value in view.plain_functions:
            jit = ([a.value for a in call.args[1:] if a.keyword is None],
                   {a.keyword.value: a.value for a in call.args if a.keyword is not None})
            fn_name = call.args[0].value.value
        elif len(call.args) >= 1 and isinstance(call.func, cst.Name) and call.func.value in view.plain_functions \
                and isinstance(call.args[0].value, cst.Name) and call.args[0].keyword is None \
                and call.args[0].value.value in view.plain_functions:
            jit = jit_parts(view, call.func)  # jit(fn): a project's decorator called on the function
            if jit is not None:
                jit = (jit[0], {**jit[1], **{a.keyword.value: a.value for a in call.args if a.keyword}})
            fn_name = call.args[0].value.value
        else:
            return
        entry = view.plain_functions.get(fn_name)
        if jit is None or entry is None:
            return
        fn, fn_view, fn_prefix = entry
        name = bound if bound and view is self.info else fn_name
        key = name if fn_view is self.info else f"{fn_prefix}{name}"
        existing = self.info.functions.get(key)
        if existing is not None and existing.node is fn and existing.signatures:
            try:  # another signature for the same function: Numba's dispatcher holds both
                extra = function_info(view, fn, jit, existing.enclosing, key, name, call)
            except Unsupported:
                extra = None
            if extra is not None and extra.signatures and extra.is_device == existing.is_device:
                existing.notices += [n for n in extra.notices if n not in existing.notices]
                existing.signatures += [s for s in extra.signatures if s not in existing.signatures]
                existing.also_known_as |= {fn_name, bound} - {None}
                self.made_at[call] = existing
                return
        fi = self.register(fn_view, fn, jit, None, key, name, call)
        if fi is not None:
            fi.also_known_as |= {fn_name, bound} - {None}
            self.made_at[call] = fi
            if bound and view is not self.info and view is not fn_view:
                view.functions.maps[0][bound] = fi

    # ------------------------------------------------------------ factories
    def returned_kernel(self, fn, child):
        returned = _returned(fn)
        if isinstance(returned, cst.Name):
            return returned.value, child.functions.maps[0].get(returned.value)
        if isinstance(returned, cst.Call) and returned in self.made_at:
            made = self.made_at[returned]
            return made.name, made
        return None, None

    def instantiate_factories(self) -> None:
        """`k = factory(3.0)` at module level: the kernel the factory returns, made with its parameters bound."""
        factories = {}
        for fn, child in self.candidates:
            local, template = self.returned_kernel(fn, child)
            if template is not None:
                factories[fn] = (local, template)
        for name, value in list(self.info.value_nodes.items()):
            if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
                continue
            entry = self.info.plain_functions.get(value.func.value)
            if entry is None or entry[0] not in factories:
                continue
            fn = entry[0]
            local, template = factories[fn]
            bound = _bind_call(self.info, fn, value)
            if bound is None:
                continue  # arguments known only by running: the template stays, with its parameters unknown
            template.listed = False
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


def _at_compile(view: ModuleInfo, fi: FunctionInfo, enclosing: cst.FunctionDef) -> ModuleInfo:
    """VIEW as the kernel sees it when it compiles (at its definition when it has a signature, else at its first
    launch; Numba keeps what it saw for every later launch): a name the enclosing function assigns several times
    (in straight-line code) holds the value it had then; an array changed in place before then (or when that
    moment is unknown) is not a constant."""
    changing = {n: h for n, h in view.history.items() if h and len(h) > 1 and n in view.nonconstant}
    if not changing and not view.mutations:
        return view
    line = view.reporter.location(fi.node).line if fi.signatures else _first_launch(view, fi, enclosing)
    compiled = view.view(constants=dict(view.constants), nonconstant=dict(view.nonconstant))
    for name, lines in view.mutations.items():
        if line is None or min(lines) < line:
            compiled.constants.pop(name, None)
            compiled.nonconstant[name] = (f"is a NumPy array changed in place (line {min(lines)}); Numba bakes in "
                                          "its values when the kernel compiles, which numba2cuda cannot tell from "
                                          "the source")
    if line is None:
        return compiled
    for name, history in changing.items():
        before = [node for at, node in history if at < line]
        if not before:
            continue
        try:
            compiled.constants[name] = const_eval(compiled, before[-1])
            compiled.nonconstant.pop(name, None)
        except ConstEvalError:
            pass
    return compiled


def _first_launch(view, fi: FunctionInfo, enclosing: cst.FunctionDef):
    """The line of the first `kernel[grid, block](...)` (or `kernel.forall(n)(...)`) after the kernel's definition."""
    start = view.reporter.location(fi.node).line
    names = {fi.name, fi.node.name.value}
    lines = []

    class Launches(cst.CSTVisitor):
        def visit_Call(self, node) -> None:
            func = node.func
            target = func.value if isinstance(func, cst.Subscript) else (
                func.func.value if isinstance(func, cst.Call) and isinstance(func.func, cst.Attribute)
                and func.func.attr.value == "forall" else None)
            if isinstance(target, cst.Name) and target.value in names:
                at = view.reporter.location(node).line
                if at > start:
                    lines.append(at)

    enclosing.body.visit(Launches())
    return min(lines) if lines else None


def _publishes_locals(fn: cst.FunctionDef) -> bool:
    """Whether FN's body runs `globals().update(locals())`."""
    for stmt in _body(fn):
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                call = getattr(small, "value", None)
                if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
                        call.func.attr.value == "update" and isinstance(call.func.value, cst.Call) and \
                        isinstance(call.func.value.func, cst.Name) and call.func.value.func.value == "globals" and \
                        len(call.args) == 1 and isinstance(call.args[0].value, cst.Call) and \
                        isinstance(call.args[0].value.func, cst.Name) and call.args[0].value.func.value == "locals":
                    return True
    return False


def _bind_call(info, fn: cst.FunctionDef, call: cst.Call) -> dict | None:
    """{parameter: constant} of a call with constant arguments (defaults included), or None."""
    params = [*fn.params.posonly_params, *fn.params.params]
    values = {}
    try:
        positional = [a for a in call.args if a.keyword is None]
        if any(a.star for a in call.args) or len(positional) > len(params):
            return None
        for p, a in zip(params, positional):
            values[p.name.value] = const_eval(info, a.value)
        for a in call.args:
            if a.keyword is not None:
                values[a.keyword.value] = const_eval(info, a.value)
        for p in params:
            if p.name.value not in values:
                if p.default is None:
                    return None
                values[p.name.value] = const_eval(info, p.default)
    except ConstEvalError:
        return None
    return values


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
