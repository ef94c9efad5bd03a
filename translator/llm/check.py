"""a model's answer -> its CUDA C code, or the reasons it may not be compiled: code fence parsing and the allow-list.

The allow-list reads the code as the compiler does (lexer.py: what could be read two ways is refused),
accepts only device code of a closed shape (shape.py: nothing at namespace scope runs code when the
file is loaded), and judges every identifier (names.py: no host library name, no reserved `_` name, no
asm/extern/new/operator/...; `::` only in n2c::HELPER calls; no [[attributes]]), so the code can only
compute, call the CUDA device API, the n2c:: helpers and its own functions. Every problem names its line
and what to write instead: a repairable failure, sent back to the model.
"""

from __future__ import annotations

import re

from functools import lru_cache

from .lexer import Lexed, Token, lex, normalise
from .names import DYNAMIC_SMEM, host_names, refusal
from .shape import Shape

MAX_ANSWER_CHARS = 200_000
MAX_PROBLEMS = 12
EXTERN_SHARED = ("declares its own `extern __shared__` array: the file already declares the dynamic shared memory "
                 f"as `extern __shared__ unsigned char {DYNAMIC_SMEM}[]` (16-byte aligned); take a typed pointer to "
                 f"it (`float *buf = reinterpret_cast<float *>({DYNAMIC_SMEM});`); its size in bytes is "
                 "`n2c::dynamic_smem_bytes()`")


class AnswerError(Exception):
    """The answer cannot be used; `text` says why, in words meant for the model and for the user."""

    def __init__(self, text: str):
        self.text = text
        super().__init__(text)


def extract_code(answer: str) -> str:
    """The code of an answer: its fenced blocks (cuda/c++/c or unlabelled), else the whole message if it is code.
    Line ends are normalised (lexer.normalise): what is checked is what is compiled."""
    if len(answer) > MAX_ANSWER_CHARS:
        raise AnswerError(f"the answer is {len(answer)} characters, more than the {MAX_ANSWER_CHARS} accepted")
    if not answer.strip():
        raise AnswerError("the answer is empty")
    answer = normalise(answer)
    blocks = re.findall(r"```[ \t]*([\w+.-]*)[^\n]*\n(.*?)```", answer, re.S)
    code = [body for lang, body in blocks if lang.lower() in ("", "cuda", "cu", "cpp", "c++", "c", "cuh", "cxx")]
    if code:
        return "\n".join(body.strip("\n") for body in code) + "\n"
    if blocks:
        raise AnswerError(f"the answer's code blocks are not CUDA C (languages: "
                          f"{', '.join(sorted({lang or 'none' for lang, _ in blocks}))})")
    if "__global__" in answer and "```" not in answer:
        return answer.strip("\n") + "\n"
    if answer.count("```") % 2:
        raise AnswerError("the answer's code block is not closed (cut off at the token limit?)")
    raise AnswerError("the answer contains no code block (expected one ```cuda block with the kernel)")


def tokens(code: str) -> list[Token]:
    return lex(code).tokens


@lru_cache(maxsize=1)
def helper_functions() -> dict[str, str]:
    """{function: helper section} of templates/n2c_helpers.cuh: what an answer may call as n2c::NAME."""
    from ..emit.render import helper_sections

    out = {}
    for section, text in helper_sections().items():
        for name in re.findall(r"__device__ __forceinline__ [\w:<>\s*]*?\b(\w+)\s*\(", text):
            out.setdefault(name, section)
    return out


def check_code(code: str, signature: str, reserved: set[str], constants=()) -> list[str]:
    """Problems of CODE against the allow-list; empty when it may be compiled. SIGNATURE is the one `__global__`
    declaration allowed (without the body); RESERVED are names our own code defines; CONSTANTS the module
    constants the file declares (an initialiser may use them)."""
    lexed = lex(code)
    problems = list(lexed.problems)
    if lexed.complete:  # the shape first: it says what the code tries to do, the names say how
        problems += Shape(lexed.tokens, signature, reserved, set(constants)).problems()
        problems += _identifiers(lexed)
    problems = list(dict.fromkeys(problems))  # each problem once, in order
    if len(problems) > MAX_PROBLEMS:
        problems = problems[:MAX_PROBLEMS] + [f"... and {len(problems) - MAX_PROBLEMS} more"]
    return problems


def _identifiers(lexed: Lexed) -> list[str]:
    """Every identifier judged by names.refusal, each reported once; n2c:: only before a helper's name."""
    host = host_names()
    helpers = helper_functions()
    toks, problems, seen = lexed.tokens, [], set()
    for i, t in enumerate(toks):
        prev = toks[i - 1].text if i else ""
        nxt = toks[i + 1].text if i + 1 < len(toks) else ""
        if t.kind == "punct" and t.text == "[" and nxt == "[":
            problems.append(f"line {t.line}: attributes ([[...]]) are not allowed")
        if t.kind == "punct" and t.text == "::" and not (prev == "n2c" and i >= 1):
            problems.append(f"line {t.line}: '::' is allowed only in n2c::HELPER calls")
        if t.kind != "ident" or prev in (".", "->") or (t.text, prev) in seen:
            continue
        if t.text == "n2c":
            name = toks[i + 2].text if i + 2 < len(toks) else ""
            if nxt != "::" or name not in helpers:
                problems.append(f"line {t.line}: 'n2c::{name}' is not one of the n2c:: helpers "
                                f"({', '.join(sorted(helpers))})")
            continue
        if prev == "::" and i >= 2 and toks[i - 2].text == "n2c":
            continue
        if t.text == "extern" and nxt == "__shared__":
            problems.append(f"line {t.line}: the answer {EXTERN_SHARED}")
            seen.add((t.text, prev))
            continue
        why = refusal(t.text, host)
        if why:
            problems.append(f"line {t.line}: '{t.text}' is not allowed ({why})")
            seen.add((t.text, prev))
    return problems
