"""a model's code -> C++ preprocessing tokens as the compiler reads them, or the reasons it cannot be read that way.

The allow-list (check.py) judges tokens, so tokens must be what g++ and nvcc see: translation phases
1-3 of C++ (trigraphs, line splices, comments, literals, digraphs) decide where a comment ends or a
directive starts, and a checker that reads them differently from the compiler can be fooled (a
`// comment \\` that swallows the next line for one and not the other). Rather than model every
phase, the lexer refuses what would make them differ: trigraphs, line splices, universal character
names, non-ASCII outside comments and literals, control characters, carriage returns, prefixed and
raw string literals, user-defined literal suffixes, digraphs and any `#` but a `#pragma unroll` line.
What is left has one reading. A problem that makes the rest unreadable (an unterminated comment or
literal, a raw string) stops the lexer; the others are collected and lexing goes on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PUNCTUATORS = sorted([
    "%:%:", "...", "<<=", ">>=", "->*", "<=>", "::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=",
    "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ".*", "##", "<:", ":>", "<%", "%>", "%:",
    "{", "}", "[", "]", "(", ")", "#", ";", ":", "?", ".", "+", "-", "*", "/", "%", "^", "&", "|", "~", "!",
    "=", "<", ">", ",",
], key=len, reverse=True)
DIGRAPHS = {"<:": "[", ":>": "]", "<%": "{", "%>": "}", "%:": "#", "%:%:": "##"}
STRING_PREFIXES = {"R", "u8", "u", "U", "L", "u8R", "uR", "UR", "LR"}
#: `#pragma unroll`, `#pragma unroll N`, `#pragma unroll (N)`, `#pragma nounroll`, alone on their line
PRAGMA_LINE = re.compile(r"[ \t]*(?:#)[ \t]*pragma[ \t]+(?:unroll(?:[ \t]+\d{1,4}|[ \t]*\([ \t]*\d{1,4}[ \t]*\))?"
                         r"|nounroll)[ \t]*(?://[^\n]*)?(?=\n|\Z)")
TRIGRAPH = re.compile(r"\?\?[=/'()!<>\-]")
SPLICE = re.compile(r"\\[ \t\f\v]*\n")
BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


@dataclass(frozen=True)
class Token:
    kind: str  # ident | number | char | string | punct | pragma
    text: str
    line: int
    col: int  # 1-based


class Lexed:
    """The tokens of a piece of code and the problems found reading it (empty when the code has one reading)."""

    def __init__(self):
        self.tokens: list[Token] = []
        self.problems: list[str] = []
        self.complete = True  # False when a problem stopped the lexer before the end

    def refuse(self, line: int, text: str) -> None:
        self.problems.append(f"line {line}: {text}")


def normalise(code: str) -> str:
    """CRLF line ends as LF: the text that is checked is the text that is compiled, so callers compile this."""
    return code.replace("\r\n", "\n")


_MASTER = re.compile("|".join([
    r"(?P<nl>\n)", r"(?P<ws>[ \t\f\v]+)", r"(?P<line_comment>//[^\n]*)", r"(?P<block_comment>/\*)",
    r"(?P<quote>[\"'])", r"(?P<ident>[A-Za-z_][A-Za-z0-9_]*)",
    r"(?P<number>\.?[0-9](?:[eEpP][+-]|'[0-9A-Za-z_]|[0-9A-Za-z_.])*)",
    r"(?P<less><)(?=::(?![:>]))",  # C++11 [lex.pptoken]/3: `<::` is `<` then `::` unless followed by `:` or `>`
    "(?P<punct>" + "|".join(re.escape(p) for p in PUNCTUATORS) + ")",
]))


def lex(code: str) -> Lexed:
    """Tokens of CODE (normalised: see normalise()); comments and whitespace dropped."""
    out = Lexed()
    _character_problems(code, out)
    i, n, line, col0, at_line_start = 0, len(code), 1, 0, True  # col0: index where the current line starts
    match = _MASTER.match
    while i < n:
        m = match(code, i)
        kind = m.lastgroup if m else None
        if kind == "nl":
            i, line, col0, at_line_start = i + 1, line + 1, i + 1, True
            continue
        if kind in ("ws", "line_comment"):
            i = m.end()
            continue
        col = i - col0 + 1
        if kind == "block_comment":
            end = code.find("*/", i + 2)
            if end < 0:
                out.refuse(line, "a /* comment is never closed (the code is cut off?)")
                out.complete = False
                return out
            newlines = code.count("\n", i, end)
            if newlines:
                line += newlines
                col0 = code.rfind("\n", i, end) + 1
            i = end + 2
            continue
        if kind == "quote":
            c = code[i]
            end = _literal_end(code, i)
            if end < 0:
                out.refuse(line, f"a {'string' if c == chr(34) else 'character'} literal is never closed")
                out.complete = False
                return out
            out.tokens.append(Token("string" if c == '"' else "char", code[i:end], line, col))
            if end < n and (code[end].isalnum() or code[end] == "_"):
                out.refuse(line, "a literal with a suffix (user-defined literals) is not allowed")
            i, at_line_start = end, False
            continue
        if kind == "ident":
            text, end = m.group(), m.end()
            if end < n and code[end] in "\"'" and text in STRING_PREFIXES:
                out.refuse(line, f"string literals with a prefix ({text}\"...\": raw, wide or unicode strings) are "
                                 "not allowed")
                out.complete = False
                return out
            if end < n and (code[end] in "\\$" or ord(code[end]) > 127):
                out.refuse(line, f"the identifier '{text}' continues with {code[end]!r}: only ASCII letters, digits "
                                 "and '_' are allowed in names")
            out.tokens.append(Token("ident", text, line, col))
            i, at_line_start = end, False
            continue
        if kind == "number":
            out.tokens.append(Token("number", m.group(), line, col))
            i, at_line_start = m.end(), False
            continue
        if kind in ("less", "punct"):
            punct = m.group()
            if DIGRAPHS.get(punct, punct) in ("#", "##"):
                end = code.find("\n", i)
                end = n if end < 0 else end
                start = code.rfind("\n", 0, i) + 1
                if punct == "#" and at_line_start and PRAGMA_LINE.match(code, start):
                    out.tokens.append(Token("pragma", " ".join(code[i:end].split("//")[0].split()), line, col))
                elif at_line_start:
                    out.refuse(line, f"the preprocessor directive '{' '.join(code[i:end].split())[:60]}' is not "
                                     "allowed (the only directive allowed is #pragma unroll)")
                else:
                    out.refuse(line, f"'{punct}' is not allowed outside a #pragma unroll line")
                i, at_line_start = end, False
                continue
            if punct in DIGRAPHS:
                out.refuse(line, f"digraphs ('{punct}' for '{DIGRAPHS[punct]}') are not allowed")
            out.tokens.append(Token("punct", DIGRAPHS.get(punct, punct), line, col))
            i, at_line_start = i + len(punct), False
            continue
        c = code[i]
        out.refuse(line, f"unexpected character {c!r}" + (" (a backslash outside a string literal)" if c == "\\"
                                                            else ""))
        i, at_line_start = i + 1, False
    return out


def _character_problems(code: str, out: Lexed) -> None:
    """What phases 1 and 2 would rewrite, and characters the compilers read differently: refused wherever they are."""
    def line_of(pos: int) -> int:
        return code.count("\n", 0, pos) + 1

    for pattern, what in ((TRIGRAPH, "trigraphs (??= ??/ ...) are not allowed"),
                          (SPLICE, "line continuations (a backslash at the end of a line) are not allowed"),
                          (BIDI, "bidirectional-text control characters are not allowed")):
        m = pattern.search(code)
        if m:
            out.refuse(line_of(m.start()), what)
    m = re.search(r"[\x00-\x08\x0e-\x1f\x7f\r]", code)
    if m:
        out.refuse(line_of(m.start()), f"the control character {m.group()!r} is not allowed")


def _literal_end(code: str, i: int) -> int:
    """Index just past the string or character literal starting at I, or -1 if it is not closed on its line."""
    quote, j, n = code[i], i + 1, len(code)
    while j < n:
        c = code[j]
        if c == "\\":
            j += 2
            continue
        if c == quote:
            return j + 1
        if c == "\n":
            return -1
        j += 1
    return -1
