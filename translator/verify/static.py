"""a given translation + the faithful one -> width changes of integers and floats that inputs may never show.

Numba types Python integer locals (indices, counters, accumulators) as int64. A translation that keeps one in
32 bits computes the same values until 2^31, which no test input of a few thousand elements reaches, so the
cases cannot catch it. A float64 value kept in float32 (or a float32 one in float64) may round alike on every
drawn input. This check compares the given .cu with the rules' own translation of the same module (faithful
by construction, Numba's types throughout) and reports:

  * a variable the faithful translation declares 64-bit and the given one 32-bit or narrower (never declared
    narrow in the faithful one), or declared double where the given one says float, or float where it says
    double;
  * a narrowing cast (to a 32-bit-or-narrower integer, or to float) added on the statements of a Python line
    (the `// file.py:N` comment each statement carries);
  * a widening conversion dropped before a product of 32-bit values (a grid index, blockIdx.x * blockDim.x,
    which Numba computes in int64).
"""

from __future__ import annotations

import re

_WIDE = {"int64_t", "uint64_t", "long", "long long", "unsigned long", "unsigned long long", "size_t", "ptrdiff_t",
         "intptr_t", "uintptr_t", "long int", "long long int"}
_NARROW = {"int", "int32_t", "unsigned", "unsigned int", "uint32_t", "short", "int16_t", "uint16_t",
           "unsigned short", "int8_t", "uint8_t", "char", "signed char", "unsigned char", "signed", "signed int"}
_FLOATS = {"float", "double"}
_TYPES = sorted(_WIDE | _NARROW | _FLOATS, key=len, reverse=True)
_DECL = re.compile(r"(?<![\w.>])(?:const\s+)?(" + "|".join(re.escape(t) for t in _TYPES) + r")\s+(\w+)\s*(?=[=;,)\[])")
_NARROW_CAST = re.compile(r"\((?:" + "|".join(re.escape(t) for t in _NARROW) + r")\)|static_cast<\s*(?:"
                          + "|".join(re.escape(t) for t in _NARROW) + r")\s*>")
_FLOAT_CAST = re.compile(r"\(float\)|static_cast<\s*float\s*>|\bfloat\(")
_LINE_TAG = re.compile(r"//\s*([\w.\-]+\.py):(\d+)")
_NO_INPUT = "values past 2^31 would differ, and no affordable test input reaches them"


def _functions(text: str) -> dict[str, str]:
    """{name: body} of every __global__ and __device__ function (not the launchers or bindings); overloads and
    template instances of one name share an entry."""
    out: dict[str, str] = {}
    for m in re.finditer(r"__(?:global|device)__[^{;]*\)\s*\{", text):
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        name = re.search(r"(\w+)\s*\(", m.group(0))
        key = name.group(1) if name else ""
        out[key] = out.get(key, "") + "\n" + text[m.end():j]
    return out


def _bodies(text: str) -> str:
    return "\n".join(_functions(text).values())


def _code(line: str) -> str:
    return line.split("//", 1)[0]


def _declared(body: str) -> dict[str, set[str]]:
    names: dict[str, set[str]] = {}
    for line in body.splitlines():
        for ty, name in _DECL.findall(_code(line)):
            names.setdefault(name, set()).add(" ".join(ty.split()))
    return names


def _count_by_line(body: str, pattern) -> dict[str, int]:
    """Matches of PATTERN per Python line, each distinct statement counted once: a statement repeated as it
    was (a loop split in two, an unrolled body) computes in the same widths."""
    counts: dict[str, int] = {}
    seen = set()
    for line in body.splitlines():
        tag = _LINE_TAG.search(line)
        if tag:
            key, code = f"{tag.group(1)}:{tag.group(2)}", " ".join(_code(line).split())
            if (key, code) in seen:
                continue
            seen.add((key, code))
            counts[key] = counts.get(key, 0) + len(pattern.findall(code))
    return counts


def _declaration_problems(faithful: dict, given: dict) -> list[str]:
    problems = []
    for name, tys in sorted(given.items()):
        before = faithful.get(name)
        if not before:
            continue  # a variable the given translation added or renamed: nothing to compare with
        if tys & _NARROW and before & _WIDE and not before & _NARROW:
            problems.append(f"integer narrowed to 32 bits: '{name}' is int64 in Numba (and in the faithful "
                            f"translation) but the given translation declares it {sorted(tys & _NARROW)[0]}: "
                            + _NO_INPUT)
        elif "float" in tys and before == {"double"}:
            problems.append(f"float64 narrowed to float32: '{name}' is float64 in Numba (and in the faithful "
                            "translation) but the given translation declares it float: its rounding differs")
        elif "double" in tys and before == {"float"}:
            problems.append(f"float32 widened to float64: '{name}' is float32 in Numba (and in the faithful "
                            "translation) but the given translation declares it double: its rounding differs")
    return problems


def narrowing_problems(faithful: str, given: str) -> list[str]:
    """What the given translation computes in another width than the faithful one (empty when nothing)."""
    fb, gb = _bodies(faithful), _bodies(given)
    declared = _declared(fb)
    # per function: a name is one variable only within its function (a helper's 32-bit loop counter `i` says
    # nothing of the kernel's int64 grid index `i`)
    ffuns, gfuns = _functions(faithful), _functions(given)
    problems = [p for name, body in gfuns.items() if name in ffuns
                for p in _declaration_problems(_declared(ffuns[name]), _declared(body))]
    for pattern, what in ((_NARROW_CAST, "integer narrowed to 32 bits: the statement of {} casts to a 32-bit or "
                                         "narrower integer where the faithful translation does not: " + _NO_INPUT),
                          (_FLOAT_CAST, "float64 narrowed to float32: the statement of {} rounds to float where "
                                        "the faithful translation does not")):
        before, after = _count_by_line(fb, pattern), _count_by_line(gb, pattern)
        problems += [what.format(where) for where, n in sorted(after.items()) if where in before and n > before[where]]
    # a product of 32-bit values the faithful translation widens first (a grid index: blockIdx.x * blockDim.x)
    narrow32 = sorted(n for n, tys in declared.items() if tys & {"int", "int32_t", "unsigned", "unsigned int",
                                                                   "uint32_t"})
    widen = re.compile(r"(?:\((?:int64_t|long|long long|uint64_t|size_t)\)|static_cast<\s*(?:int64_t|long|uint64_t)\s*>)"
                       r"\s*(?:(?:blockIdx|blockDim|gridDim|threadIdx)\.[xyz]|(?:%s)\b)\s*\*"
                       % ("|".join(map(re.escape, narrow32)) or "(?!)"))
    before, after = _count_by_line(fb, widen), _count_by_line(gb, widen)
    problems += [f"integer narrowed to 32 bits: the statement of {where} drops a conversion to a 64-bit integer the "
                 f"faithful translation makes before a product (Numba computes it in int64): {_NO_INPUT}"
                 for where, n in sorted(before.items()) if where in after and after[where] < n]
    return problems
