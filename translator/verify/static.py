"""a given translation + the faithful one -> integer narrowings no affordable input would show.

Numba types Python integer locals (indices, counters, accumulators) as int64. A translation that keeps one
in 32 bits computes the same values until 2^31, which no test input of a few thousand elements reaches, so
the cases cannot catch it; this check compares the given .cu with the rules' own translation of the same
module (faithful by construction): a variable the faithful one declares 64-bit and the given one declares
32-bit or narrower, or a narrowing cast added on a statement of some Python line (the `// file.py:N`
comment each statement carries), is reported.
"""

from __future__ import annotations

import re

_WIDE = {"int64_t", "uint64_t", "long", "long long", "unsigned long", "unsigned long long", "size_t", "ptrdiff_t",
         "intptr_t", "uintptr_t", "long int", "long long int"}
_NARROW = {"int", "int32_t", "unsigned", "unsigned int", "uint32_t", "short", "int16_t", "uint16_t",
           "unsigned short", "int8_t", "uint8_t", "char", "signed char", "unsigned char", "signed", "signed int"}
_TYPES = sorted(_WIDE | _NARROW, key=len, reverse=True)
_DECL = re.compile(r"(?<![\w.>])(?:const\s+)?(" + "|".join(re.escape(t) for t in _TYPES) + r")\s+(\w+)\s*(?=[=;,)\[])")
_CAST = re.compile(r"\((?:" + "|".join(re.escape(t) for t in _NARROW) + r")\)|static_cast<\s*(?:"
                   + "|".join(re.escape(t) for t in _NARROW) + r")\s*>")
_LINE_TAG = re.compile(r"//\s*([\w.\-]+\.py):(\d+)")


def _bodies(text: str) -> str:
    """The text of every __global__ and __device__ function body (not the launchers or bindings)."""
    out = []
    for m in re.finditer(r"__(?:global|device)__[^{;]*\)\s*\{", text):
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        out.append(text[m.end():j])
    return "\n".join(out)


def _strip_comments(line: str) -> str:
    return line.split("//", 1)[0]


def _declared(body: str) -> dict[str, set[str]]:
    names: dict[str, set[str]] = {}
    for line in body.splitlines():
        for ty, name in _DECL.findall(_strip_comments(line)):
            names.setdefault(name, set()).add(" ".join(ty.split()))
    return names


def _casts_by_line(body: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in body.splitlines():
        tag = _LINE_TAG.search(line)
        if tag:
            key = f"{tag.group(1)}:{tag.group(2)}"
            counts[key] = counts.get(key, 0) + len(_CAST.findall(_strip_comments(line)))
    return counts


def narrowing_problems(faithful: str, given: str) -> list[str]:
    """What the given translation narrows that the faithful one keeps 64-bit (empty when nothing)."""
    fb, gb = _bodies(faithful), _bodies(given)
    wide = {n for n, tys in _declared(fb).items() if tys & _WIDE}
    problems = []
    for name, tys in sorted(_declared(gb).items()):
        narrow = tys & _NARROW
        if name in wide and narrow:
            problems.append(f"integer narrowed to 32 bits: '{name}' is int64 in Numba (and in the faithful "
                            f"translation) but the given translation declares it {sorted(narrow)[0]}: values past "
                            "2^31 would differ, and no affordable test input reaches them")
    f_casts, g_casts = _casts_by_line(fb), _casts_by_line(gb)
    for where, n in sorted(g_casts.items()):
        if n > f_casts.get(where, 0) and where in f_casts:
            problems.append(f"integer narrowed to 32 bits: the statement of {where} casts to a 32-bit or narrower "
                            "integer where the faithful translation does not: values past 2^31 would differ, and "
                            "no affordable test input reaches them")
    return problems
