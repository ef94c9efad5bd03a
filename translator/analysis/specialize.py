"""typed kernel -> its tile-width parameters: integer arguments that slice shared memory or bound loops.

The lecture's "mystery": the same tiled matmul runs 1.5x slower when the tile width is a
run-time value, because the compiler cannot unroll or fold what it does not know. Such a
parameter becomes `template <int TW>`; the launcher's switch picks an instantiation for the
common values and falls back to the generic kernel (TW = 0: the run-time value) for any other.
"""

from __future__ import annotations

from ..ir import nodes as ir
from ..ir import typesys as T
from .dataflow import walk_body, walk_expr, walk_statements
from ..errors import UserError
from ..ir.facts import root_array

DEFAULT_VALUES = (8, 16, 32)


def _params_in(exprs, names) -> set:
    found = set()
    for e in exprs:
        if e is None:
            continue
        for node in walk_expr(e):
            if isinstance(node, ir.Name) and node.name in names and node.var is not None and node.var.is_param:
                found.add(node.name)
    return found


#: instantiations the automatic choice may make (the generic kernel besides): every one is compiled, and the
#: product over several detected parameters grows fast (dpbench's k-NN has four loop bounds: 81 instantiations,
#: two minutes of nvcc). --specialize asks for more explicitly.
MAX_AUTO_INSTANTIATIONS = 9


def detect(fn: ir.Function) -> list[str]:
    """Integer parameters that size or offset shared-memory views (tile widths, first), or bound a range() loop."""
    names = {p.name for p in fn.params if p.array is None and isinstance(p.type, T.Scalar) and p.type.is_int}
    tiles: set = set()
    bounds: set = set()

    for s in walk_statements(fn.body):
        if isinstance(s, ir.ArrayDecl) and s.array.kind == "view":
            if root_array(s.array).kind in ("shared", "dynamic"):
                tiles.update(_params_in([s.array.offset] + list(s.array.shape), names))
        if isinstance(s, ir.ForRange):
            bounds.update(_params_in([s.start, s.stop, s.step], names))
    return [p.name for p in fn.params if p.name in tiles] + \
        [p.name for p in fn.params if p.name in bounds - tiles]


def template_name(param: str, taken: set) -> str:
    name = param.upper()
    while name in taken or name == param:
        name += "_"
    return name


def plan(fn: ir.Function, requested: dict) -> None:
    """Set fn.template_params to [(param, TEMPLATE_NAME, values)] from detection and --specialize."""
    ints = {p.name: p for p in fn.params if p.array is None and isinstance(p.type, T.Scalar) and p.type.is_int}
    chosen = []
    if requested.get("*") == ():
        fn.template_params = []
        return
    for name, values in requested.items():
        if name == "*" or name not in [p.name for p in fn.params]:
            continue
        if name not in ints:
            raise UserError(f"--specialize {name}: '{name}' of kernel {fn.c_name} is not an integer parameter")
    instantiations = 1
    for name in [n for n in requested if n in ints] + [n for n in detect(fn) if n not in requested]:
        values = requested.get(name, DEFAULT_VALUES)
        if not values:
            continue
        if any(v <= 0 for v in values):
            raise UserError(f"--specialize {name}: values must be positive (0 selects the generic kernel)")
        if name not in requested and instantiations * len(values) > MAX_AUTO_INSTANTIATIONS:
            continue  # what the budget leaves out runs with its value at run time, as any other value does
        instantiations *= len(values)
        chosen.append(name)
    order = [p.name for p in fn.params]
    chosen.sort(key=order.index)  # template parameters in the kernel's parameter order
    taken = {p.name for p in fn.params}
    fn.template_params = []
    for name in chosen:
        tname = template_name(name, taken)
        taken.add(tname)
        fn.template_params.append((name, tname, tuple(sorted(set(requested.get(name, DEFAULT_VALUES))))))


def parse_option(text: str) -> dict:
    """`tw=8,16,32` -> {"tw": (8, 16, 32)}; `tw=` or `tw=none` turns tw off; `none` turns all off."""
    if text.strip().lower() == "none":
        return {"*": ()}
    out = {}
    for part in [text]:
        if "=" not in part:
            raise UserError(f"--specialize: expected NAME=V1,V2,... got '{part}'")
        name, values = part.split("=", 1)
        values = values.strip()
        try:
            out[name.strip()] = () if values.lower() in ("", "none") else tuple(int(v) for v in values.split(","))
        except ValueError:
            raise UserError(f"--specialize {name.strip()}: values must be integers, got '{values}'") from None
    return out


def instantiations(fn: ir.Function) -> list[tuple]:
    """Every value combination the switch dispatches, in order; the generic kernel is not listed."""
    combos = [()]
    for _, _, values in fn.template_params:
        combos = [c + (v,) for c in combos for v in values]
    return combos


def _param_named(e, names) -> str | None:
    """The integer parameter an expression is (through casts), else None."""
    while isinstance(e, ir.Cast):
        e = e.value
    if isinstance(e, ir.Name) and e.name in names and e.var is not None and e.var.is_param:
        return e.name
    return None


def value_rules(fn: ir.Function) -> dict[str, tuple[str, str]]:
    """Integer parameters a launch checks before the kernel runs: name -> (condition, why), the condition
    "> 0", ">= 0" or "!= 0". Only values where the kernel itself is valid pass: a tile width (it sizes or
    offsets a shared-memory view) of 0 or less gives an empty or negative tile the kernel still indexes; a
    divisor of `/` of 0 gives inf (Numba's thread raises ZeroDivisionError instead); a range() step of 0 never
    ends. The translation's assumptions (fn.assumptions, from the bounds analysis) add ">= 0"."""
    names = {p.name for p in fn.params if p.array is None and isinstance(p.type, T.Scalar) and p.type.is_int}
    views: dict = {}
    nonzero: dict = {}
    for s in walk_statements(fn.body):
        if isinstance(s, ir.ArrayDecl) and s.array.kind == "view" and \
                root_array(s.array).kind in ("shared", "dynamic"):
            for name in _params_in([s.array.offset] + list(s.array.shape), names):
                views.setdefault(name, []).append(s.array.name)
        if isinstance(s, ir.ForRange) and _param_named(s.step, names):
            nonzero.setdefault(_param_named(s.step, names), "it is a range() step")
    for e in walk_body(fn.body):
        if isinstance(e, ir.BinOp) and e.op == "/" and _param_named(e.right, names):
            nonzero.setdefault(_param_named(e.right, names), "it divides (/)")
    rules = {}
    for p in fn.params:
        why = []
        if p.name in views:
            shown = list(dict.fromkeys(views[p.name]))
            why.append(f"it sizes the shared-memory view{'s' if len(shown) > 1 else ''} {', '.join(shown)}")
        if p.name in nonzero:
            why.append(nonzero[p.name])
        if p.name in fn.assumptions:
            why.append("the translation assumes it >= 0")
        if not why:
            continue
        positive = p.name in views or (p.name in nonzero and p.name in fn.assumptions)
        condition = "> 0" if positive else "!= 0" if p.name in nonzero else ">= 0"
        rules[p.name] = (condition, "; ".join(why))
    return rules
