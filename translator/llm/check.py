"""a model's answer -> its CUDA C code, or the reasons it may not be compiled: code fence parsing and the allow-list.

The model writes device code only: one `__global__` function with exactly the signature our
templates launch, and `__device__` helpers. Everything host-side (launchers, bindings, dispatch)
comes from our templates, so the allow-list refuses what could reach the host or hide from this
check: preprocessor directives other than a fixed set of #include and `#pragma unroll`, line
splices, digraphs, inline assembly, CUDA runtime/driver API calls, process and memory functions,
`__host__`, `main`, `extern` other than `extern __shared__`, namespaces, and top-level definitions
that are not `__global__`/`__device__`/`__constant__` code, types or constants. The check reads
tokens with comments and string literals removed, as the compiler does, so a comment can neither
hide code from it nor get text past it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_ANSWER_CHARS = 200_000
ALLOWED_INCLUDES = ("cstdint", "cstdio", "cmath", "cfloat", "climits", "cstddef", "type_traits",
                    "stdint.h", "stdio.h", "math.h", "float.h", "limits.h", "stddef.h")
FORBIDDEN_IDENTIFIERS = {
    "asm": "inline assembly", "__asm": "inline assembly", "__asm__": "inline assembly",
    "__host__": "host code", "main": "a main() function", "namespace": "namespaces",
    "malloc": "host memory management", "calloc": "host memory management", "realloc": "host memory management",
    "free": "host memory management", "new": "dynamic allocation", "delete": "dynamic allocation",
    "system": "process control", "exit": "process control", "abort": "process control", "fork": "process control",
    "popen": "process control", "execv": "process control", "execve": "process control", "execl": "process control",
    "execvp": "process control", "getenv": "the environment", "fopen": "file access", "fwrite": "file access",
    "fread": "file access", "freopen": "file access", "remove": "file access", "dlopen": "dynamic loading",
    "dlsym": "dynamic loading", "mmap": "memory mapping", "class": "classes (use a struct)",
    "std": "the host standard library; use CUDA's device functions (min, max, fminf, INFINITY, ...)",
    "cudaLaunchKernel": "the CUDA runtime API (launches come from our templates)",
}
HOST_API = re.compile(r"(cuda|cu|nvrtc|cublas|cufft|curand|cusparse|cusolver|nccl)[A-Z]\w*\Z")
TOP_LEVEL_STARTS = {"__global__", "__device__", "__constant__", "__forceinline__", "__noinline__", "static",
                    "inline", "template", "struct", "union", "enum", "typedef", "using", "constexpr", "const"}
TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<number>\.?\d[\w.]*(?:[eEpP][+-][\w.]*)*)
  | (?P<punct>::|->|<<|>>|<=|>=|==|!=|&&|\|\||\+\+|--|[-+*/%&|^!~=<>?:;,.(){}\[\]#])
  | (?P<other>.)
""", re.S | re.X)


class AnswerError(Exception):
    """The answer cannot be used; `text` says why, in words meant for the model and for the user."""

    def __init__(self, text: str):
        self.text = text
        super().__init__(text)


@dataclass
class Token:
    kind: str
    text: str
    line: int


def extract_code(answer: str) -> str:
    """The code of an answer: its fenced blocks (cuda/c++/c or unlabelled), else the whole message if it is code."""
    if len(answer) > MAX_ANSWER_CHARS:
        raise AnswerError(f"the answer is {len(answer)} characters, more than the {MAX_ANSWER_CHARS} accepted")
    if not answer.strip():
        raise AnswerError("the answer is empty")
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
    out, line = [], 1
    for m in TOKEN.finditer(code):
        kind, text = m.lastgroup, m.group()
        if kind not in ("ws", "comment"):
            out.append(Token(kind, text, line))
        line += text.count("\n")
    return out


def normalise_signature(text: str) -> str:
    """A declaration with whitespace only where it separates two words: `const float * x` -> `const float*x`."""
    return " ".join(" ".join(t.text for t in tokens(text)).split()).replace(" *", "*").replace("* ", "*") \
        .replace(" ,", ",").replace(", ", ",").replace(" (", "(").replace("( ", "(").replace(" )", ")")


def check_code(code: str, signature: str, reserved: set[str]) -> list[str]:
    """Problems of CODE against the allow-list; empty when it may be compiled. SIGNATURE is the one
    `__global__` declaration allowed (without the body); RESERVED are names our own code defines."""
    problems: list[str] = []
    if re.search(r"\\\r?\n", code):
        problems.append("line continuations (a backslash at the end of a line) are not allowed")
    if re.search(r"\?\?[=/'()!<>\-]", code):
        problems.append("trigraphs are not allowed")
    all_toks = tokens(code)
    directive_lines, directive_problems = _directives(all_toks)
    problems += directive_problems
    toks = [t for t in all_toks if t.line not in directive_lines]
    for i, t in enumerate(toks):
        if t.kind == "other":
            problems.append(f"line {t.line}: unexpected character {t.text!r}")
        elif t.kind == "punct" and t.text == "#":
            problems.append(f"line {t.line}: '#' outside a preprocessor line is not allowed")
        elif t.kind == "punct" and i + 1 < len(toks) and (t.text, toks[i + 1].text) in DIGRAPHS:
            problems.append(f"line {t.line}: digraphs ('{t.text}{toks[i + 1].text}') are not allowed")
        if t.kind != "ident":
            continue
        why = FORBIDDEN_IDENTIFIERS.get(t.text) or ("host API calls" if HOST_API.match(t.text) else None)
        if why:
            problems.append(f"line {t.line}: '{t.text}' is not allowed ({why})")
        if t.text == "extern" and not (i + 1 < len(toks) and toks[i + 1].text == "__shared__"):
            problems.append(f"line {t.line}: 'extern' is allowed only as 'extern __shared__' (dynamic shared memory)")
    problems += _globals(toks, signature)
    problems += _top_level(toks, reserved)
    return list(dict.fromkeys(problems))  # each problem once, in order


DIGRAPHS = {("<", ":"), ("<", "%"), ("%", ":"), ("%", ">"), (":", ">")}


def _directives(toks: list[Token]) -> tuple[set[int], list[str]]:
    """(lines that are preprocessor directives, problems): only #include <allowed> and #pragma unroll.
    Read from the tokens, as the compiler reads them: a `#` that is the first token of its line."""
    by_line: dict[int, list[Token]] = {}
    for t in toks:
        by_line.setdefault(t.line, []).append(t)
    lines, problems = set(), []
    for n, line_toks in sorted(by_line.items()):
        if line_toks[0].text != "#":
            continue
        lines.add(n)
        words = [t.text for t in line_toks[1:]]
        path = "".join(words[1:])
        inc = words[:1] == ["include"] and re.fullmatch(r'<([\w./]+)>|"([\w./]+)"', path)
        header = inc and (inc.group(1) or inc.group(2))
        if header in ALLOWED_INCLUDES or " ".join(words) in ("pragma unroll",) or \
                re.fullmatch(r"pragma unroll \d+", " ".join(words)):
            continue
        if inc:
            problems.append(f"line {n}: '#include {path}' is not allowed (allowed: {', '.join(ALLOWED_INCLUDES)}; "
                            "the file already includes <cstdint>, <cstdio> and <cmath>)")
        else:
            problems.append(f"line {n}: the preprocessor directive '#{' '.join(words)[:60]}' is not allowed (only "
                            "#include of a standard math/integer header and #pragma unroll)")
    return lines, problems


def _globals(toks: list[Token], signature: str) -> list[str]:
    """Exactly one __global__ function, declared exactly as SIGNATURE and not as a template."""
    starts = [i for i, t in enumerate(toks) if t.text == "__global__"]
    if not starts:
        return [f"no __global__ function: the answer must define `{signature}`"]
    problems = []
    if len(starts) > 1:
        problems.append(f"{len(starts)} __global__ functions: define exactly one, `{signature}`; helpers must be "
                        "__device__ functions")
    want = normalise_signature(signature)
    for i in starts:
        j = i
        while j < len(toks) and toks[j].text not in ("{", ";"):
            j += 1
        got = normalise_signature(" ".join(t.text for t in toks[i:j]))
        templated = i > 0 and toks[i - 1].text == ">"
        if got != want or templated:
            problems.append(f"line {toks[i].line}: the __global__ function must be declared exactly "
                            f"`{signature}` (not a template, no extra qualifiers); found `{got}`")
    return problems


def _top_level(toks: list[Token], reserved: set[str]) -> list[str]:
    """Each top-level item is device code, a type or a constant, and defines no name our code defines."""
    problems, depth, item, aggregate = [], 0, [], False
    for t in toks:
        item.append(t)
        if t.text == "{":
            if depth == 0:  # `struct S {...};` and `x = {...};` end at their `;`, functions at their `}`
                words = [w.text for w in item[:-1]]
                aggregate = (words[-1:] == ["="]) or (
                    bool({"struct", "union", "enum"} & set(words)) and "(" not in words)
            depth += 1
        elif t.text == "}":
            depth -= 1
            if depth < 0:
                return problems + [f"line {t.line}: unbalanced braces"]
            if depth == 0 and not aggregate:
                problems += _check_item(item, reserved)
                item = []
        elif t.text == ";" and depth == 0:
            problems += _check_item(item, reserved)
            item, aggregate = [], False
    if depth != 0:
        problems.append("unbalanced braces: the code is cut off")
    elif item:
        problems += _check_item(item, reserved)
    return problems


def _check_item(item: list[Token], reserved: set[str]) -> list[str]:
    words = [t.text for t in item if t.text != ";"]
    if not words:
        return []
    head = words[:words.index("{")] if "{" in words else words
    line = item[0].line
    device = {"__device__", "__global__", "__constant__"} & set(head)
    if head and head[0] not in TOP_LEVEL_STARTS and not device:
        return [f"line {line}: top-level code must be a __device__ or __global__ function, a __constant__ or "
                f"constexpr value, or a type; found `{' '.join(head[:8])}`"]
    call = head.index("(") if "(" in head else -1
    if call < 0 or "=" in head[:call] or head[0] in ("struct", "union", "enum", "typedef", "using"):
        return []
    name = head[call - 1] if call > 0 else ""
    if not ({"__device__", "__global__"} & set(head)):
        return [f"line {line}: the function '{name}' must be __device__ (host functions are not allowed)"]
    if name in reserved or name.startswith("n2c") or name.endswith("_launch"):
        return [f"line {line}: '{name}' is already defined by the rest of the file (or reserved for it); "
                "give the function another name"]
    return []
