"""numba.extending's `@overload(f)` -> the device function a kernel's call of f is. Numba gets the implementation
by running the overload function when it compiles the call, with the arguments' types; numba2cuda reads those that
return one implementation whatever the types (`return lambda x: x * 10`, or `def impl(...)` then `return impl`).
One that chooses by the types (`if isinstance(x, types.Integer)`) would need running: its calls say so."""

from __future__ import annotations

import libcst as cst

from .names import resolve
from .scan import find_nodes, is_docstring

OVERLOAD_NAMES = {"cuda.extending.overload", "numba.extending.overload", "numba.core.extending.overload"}


# numba.extending's low-level API: a function typed by a typing template and lowered to LLVM IR by hand, or an
# @intrinsic that writes its LLVM IR when Numba compiles the call
EXTENDING = ("cuda.extending", "numba.extending", "numba.core.extending")
TYPING_NAMES = {f"{m}.{f}" for m in EXTENDING for f in ("type_callable", "lower_builtin")} | {
    "numba.core.imputils.lower_builtin", "cuda.cudaimpl.lower", "cuda.core.imputils.lower_builtin"}
INTRINSIC_NAMES = {f"{m}.intrinsic" for m in EXTENDING}
# numba.extending's additions to a Numba type: `@overload_method(types.Array, "foo")`, `@overload_attribute(...)`
MEMBER_APIS = {f"{m}.{f}": f for m in EXTENDING for f in ("overload_method", "overload_attribute")}
ARRAY_TYPES = {"numba.types.Array", "numba.core.types.Array", "cuda.types.Array", "numba.types.npytypes.Array",
               "numba.core.types.npytypes.Array"}


def lowered_target(view, decorator, fn: cst.FunctionDef) -> tuple[str, str] | None:
    """(the function, how) where DECORATOR of FN teaches Numba a function in LLVM IR: `@type_callable(f)` or
    `@lower_builtin(f, ...)` (f), or `@intrinsic` (FN itself)."""
    head = decorator.func if isinstance(decorator, cst.Call) else decorator
    name = resolve(view, head)
    if name in INTRINSIC_NAMES:
        return fn.name.value, "@intrinsic"
    if isinstance(decorator, cst.Call) and decorator.args and decorator.args[0].keyword is None \
            and isinstance(decorator.args[0].value, cst.Name) and name in TYPING_NAMES:
        return decorator.args[0].value.value, "@type_callable and @lower_builtin"
    return None


def overload_target(view, call) -> str | None:
    """The name of the function `overload(f, ...)` gives an implementation, when CALL is that call."""
    if isinstance(call, cst.Call) and call.args and call.args[0].keyword is None \
            and isinstance(call.args[0].value, cst.Name) and resolve(view, call.func) in OVERLOAD_NAMES:
        return call.args[0].value.value
    return None


def implementation(fn: cst.FunctionDef):
    """The def or lambda the overload function FN returns whatever its arguments' types, else None: FN holds only
    function definitions (and a docstring) before its one return."""
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else []
    returns = find_nodes(fn.body, lambda n: isinstance(n, cst.Return),
                         enter=lambda n: not isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)))
    if len(returns) != 1 or not body or not isinstance(body[-1], cst.SimpleStatementLine) \
            or body[-1].body[-1] is not returns[0] or len(body[-1].body) != 1:
        return None
    if not all(isinstance(s, cst.FunctionDef) or is_docstring(s) for s in body[:-1]):
        return None
    value = returns[0].value
    if isinstance(value, cst.Lambda):
        return value
    defs = [s for s in body if isinstance(s, cst.FunctionDef) and isinstance(value, cst.Name)
            and s.name.value == value.value]
    return defs[0] if len(defs) == 1 else None


def _member_call(view, call) -> tuple[str, str] | None:
    """(the API, the attribute) where CALL is `overload_method(T, "attr")` or `overload_attribute(T, "attr")`."""
    if isinstance(call, cst.Call) and len(call.args) >= 2 and isinstance(call.args[1].value, cst.SimpleString):
        api = MEMBER_APIS.get(resolve(view, call.func) or "")
        if api is not None:
            return api, call.args[1].value.evaluated_value
    return None


def array_method_target(view, call) -> str | None:
    """The key of the device function `@overload_method(types.Array, "foo")` gives arrays, when CALL is that call;
    its kernels' `a.foo(...)` calls it with the array first."""
    member = _member_call(view, call)
    if member is not None and member[0] == "overload_method" and resolve(view, call.args[0].value) in ARRAY_TYPES:
        return method_function(member[1])
    return None


def method_function(attr: str) -> str:
    """The key the implementation of arrays' method ATTR is registered under: no Python name, so no function of
    the module can take its place."""
    return f"<array method {attr}>"


def method_c_name(key: str) -> str:
    """The C name of the function registered under an array method's KEY (`foo_method`)."""
    return key[len("<array method "):-1] + "_method"


def extension_member(view, attr: str):
    """(the decorator, its API's name) where the module adds ATTR to a Numba type with `@overload_method(T, "attr")`
    or `@overload_attribute(T, "attr")`, else None."""
    for call in find_nodes(view.module_info.module, lambda n: isinstance(n, cst.Call)):
        member = _member_call(view, call)
        if member is not None and member[1] == attr:
            return call, member[0]
    return None
