"""KernelIR expressions -> simple facts: constant values, purity, stability, which names they mention."""

from __future__ import annotations

from . import nodes as ir


_FOLD = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
         "//": lambda a, b: a // b if b else None, "%": lambda a, b: a % b if b else None,
         "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b}


def const_int(e):
    """The value of an integer expression made of constants, or None."""
    if isinstance(e, ir.Const):
        return e.value if isinstance(e.value, int) and not isinstance(e.value, bool) else None
    if isinstance(e, ir.Unary) and e.op == "-":
        v = const_int(e.operand)
        return None if v is None else -v
    if isinstance(e, ir.BinOp) and e.op in _FOLD:
        a, b = const_int(e.left), const_int(e.right)
        return None if a is None or b is None else _FOLD[e.op](a, b)
    return None


_COMPARE = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
            "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def decided_test(e):
    """The truth of a test Numba decides before typing, so that the branch it rules out is never compiled: one made
    of literals and an array's dimension count (`if arr.ndim == 3:` in a kernel for 2-D and 3-D arrays). A module
    constant (which has a name) is not decided here: its branches are printed, testing it by name. None: undecided."""
    if isinstance(e, ir.Const):
        return bool(e.value) if not e.name and isinstance(e.value, (bool, int)) else None
    if isinstance(e, ir.Unary) and e.op == "not":
        v = decided_test(e.operand)
        return None if v is None else not v
    if isinstance(e, ir.Compare) and e.op in _COMPARE:
        a, b = (x.value if isinstance(x, ir.Const) and not x.name and isinstance(x.value, (bool, int)) else None
                for x in (e.left, e.right))
        return None if a is None or b is None else _COMPARE[e.op](a, b)
    if isinstance(e, ir.BoolOp):
        values = [decided_test(v) for v in e.values]
        if (e.op == "and" and False in values or e.op == "or" and True in values) and all(
                is_pure(v) for v, known in zip(e.values, values) if known is None):
            return e.op == "or"  # `x > 0 and a.ndim == 3` is false whatever x is
        return None if None in values else e.op == "and"
    return None


def decided_compare(test):
    """The truth of a comparison of integer expressions made of constants (`3 * 2 != 6`, names included, unlike
    decided_test's), else None."""
    if not isinstance(test, ir.Compare) or test.op not in _COMPARE:
        return None
    a, b = const_int(test.left), const_int(test.right)
    return None if a is None or b is None else _COMPARE[test.op](a, b)


def mentions(expr, names) -> bool:
    if isinstance(expr, ir.Name):
        return expr.name in names
    for child in vars(expr).values():
        if isinstance(child, ir.Expr) and mentions(child, names):
            return True
        if isinstance(child, list) and any(isinstance(c, ir.Expr) and mentions(c, names) for c in child):
            return True
    return False


def is_pure(expr) -> bool:
    if isinstance(expr, (ir.DeviceCall,)):
        return False
    if isinstance(expr, ir.Call):
        return not expr.intrinsic.key.startswith("cuda.atomic") and all(is_pure(a) for a in expr.args)
    for child in vars(expr).values():
        if isinstance(child, ir.Expr) and not is_pure(child):
            return False
        if isinstance(child, list) and any(isinstance(c, ir.Expr) and not is_pure(c) for c in child):
            return False
    return True


def root_array(arr):
    """The array a view is carved from, following `.base` to the end (the array itself when it is no view)."""
    while arr.base is not None:
        arr = arr.base
    return arr


def mark_written(arr, seen=None) -> None:
    """The array a write goes through, and every array it may stand for (views' bases, an alias's arrays),
    can no longer be const."""
    seen = set() if seen is None else seen
    root = root_array(arr)
    if id(root) in seen:
        return
    seen.add(id(root))
    root.written = True
    for source in getattr(root, "sources", ()):
        mark_written(source, seen)
