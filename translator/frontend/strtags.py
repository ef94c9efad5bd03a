"""A function's string tags -> the literals that stand for them as numbers.

Numba compiles a local bound only to string literals and only compared for equality (a ray tracer's
`hit_type = ""`, then `hit_type = "t"` or `"l"`, then `if hit_type == "l":`) without allocating: equality is
all the kernel observes. numba2cuda gives each literal of such a name the number its UTF-8 bytes spell, first byte
highest (at most 8 bytes, none of them NUL, so the first is never 0 and the length shows in the number): two
literals are equal exactly when their numbers are, the name is a uint64, and the C prints the number in hex, the
characters' codes in order ("tri" is 0x747269).
Any other use of the name (printed, indexed, measured, concatenated, passed on, tested for truth) leaves it a
string, refused where it is written as before.
"""

from __future__ import annotations

import libcst as cst

from .scan import find_nodes

MAX_TAG_BYTES = 8


def tag_number(text: str) -> int | None:
    """The number standing for TEXT, or None where TEXT has no such number (too long, or a NUL in it)."""
    raw = text.encode("utf-8")
    if len(raw) > MAX_TAG_BYTES or b"\0" in raw:
        return None
    return int.from_bytes(raw, "big")


def _literal(node) -> int | None:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return tag_number(value) if isinstance(value, str) else None
    return None


def string_tag_literals(fn: cst.FunctionDef, params) -> dict:
    """{id(string literal node): its number} for the literals that bind FN's string tags or are compared with
    them; empty where FN has none."""
    bound: dict = {}  # name -> the literal nodes bound to it (None once it is bound to anything else)
    compared: list = []  # (left, right) of every single `==` / `!=`
    reads: dict = {}  # name -> how many times it is read

    class Scan(cst.CSTVisitor):
        def visit_Assign(self, node) -> None:
            for t in node.targets:
                self.bind(t.target, node.value)

        def visit_AnnAssign(self, node) -> None:
            if node.value is not None:
                self.bind(node.target, node.value)

        def visit_AugAssign(self, node) -> None:
            self.bind(node.target, None)

        def visit_For(self, node) -> None:
            for n in _names(node.target):
                bound[n] = None

        def bind(self, target, value) -> None:
            if isinstance(target, cst.Name):
                if _literal(value) is None:
                    bound[target.value] = None
                elif bound.get(target.value, []) is not None:
                    bound.setdefault(target.value, []).append(value)
            else:
                for n in _names(target):
                    bound[n] = None

        def visit_Comparison(self, node) -> None:
            if len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, (cst.Equal, cst.NotEqual)):
                compared.append((node.left, node.comparisons[0].comparator))

    fn.body.visit(Scan())
    tags = {n for n, values in bound.items() if values and n not in params}
    if not tags:
        return {}
    tested: dict = {}  # a tag's reads that are an operand of `==` / `!=` with a literal or another tag
    for pair in compared:
        for mine, other in (pair, pair[::-1]):
            if isinstance(mine, cst.Name) and mine.value in tags and (
                    _literal(other) is not None or isinstance(other, cst.Name) and other.value in tags):
                tested[mine.value] = tested.get(mine.value, 0) + 1
    targets = {id(t.target) for a in _all(fn.body, cst.Assign) for t in a.targets}
    targets |= {id(a.target) for a in _all(fn.body, cst.AnnAssign)}
    for n in _all(fn.body, cst.Name):
        if n.value in tags and id(n) not in targets:
            reads[n.value] = reads.get(n.value, 0) + 1
    tags = {n for n in tags if reads.get(n, 0) == tested.get(n, 0)}
    out = {}
    for name in tags:
        for value in bound[name]:
            out[id(value)] = _literal(value)
    for left, right in compared:
        for mine, other in ((left, right), (right, left)):
            if isinstance(mine, cst.Name) and mine.value in tags and _literal(other) is not None:
                out[id(other)] = _literal(other)
    return out


def _names(target) -> list:
    return [n.value for n in _all(target, cst.Name)]


def _all(node, kind) -> list:
    return find_nodes(node, lambda n: isinstance(n, kind))
