"""Regenerate translator/ir/reserved_names.txt: every identifier the emitted translation units can see.

A user name that is a macro, a C++ keyword or a name declared at global scope by the headers a translated
.cu sees would break it (`float INFINITY = ...` expands the macro; a local `expf` hides the function the
translation of math.exp calls), so the translator renames it (translator/ir/cnames.py). The set is read from
the real headers, not written by hand:

* the .cu as nvcc compiles it: an empty translation unit with the template's #includes, preprocessed by
  `nvcc -E` for the device (the lowest and the highest architecture nvcc lists) and, with __CUDA_ARCH__
  undefined, for the host;
* the .cu as the CPU runtime compiles it: the same, preprocessed by g++ with translator/runtime/n2c_cpu.h
  force-included, as runtime/cpurun.py does.

From each it collects the macros (`-dM`) and the names declared at global scope (functions, variables,
types, templates, enumerators of unscoped enums, `using` declarations; class members, parameters and
anything inside a named namespace are not visible unqualified and are skipped). C++'s keywords come from
the language, not from a header, and are listed here. Names the C++ standard already reserves (containing
`__`, or `_` followed by an upper-case letter) are left out: cnames.py renames every such user name.

    python3 tools/reserved_names.py            # rewrite the data file
    python3 tools/reserved_names.py --check    # exit 1 if the committed file differs from a fresh run
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "translator" / "ir" / "reserved_names.txt"
TEMPLATE = ROOT / "templates" / "module.cu.j2"
CPU_HEADER = ROOT / "translator" / "runtime" / "n2c_cpu.h"

CXX_KEYWORDS = """alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
char32_t class compl concept const consteval constexpr constinit const_cast continue co_await co_return
co_yield decltype default delete do double dynamic_cast else enum explicit export extern false float for friend
goto if inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected
public register reinterpret_cast requires return short signed sizeof static static_assert static_cast struct
switch template this thread_local throw true try typedef typeid typename union unsigned using virtual void
volatile wchar_t while xor xor_eq restrict _Bool _Complex _Imaginary""".split()
# not keywords, but names the language itself gives a meaning at global scope ([basic.start.main])
CXX_LANGUAGE_NAMES = ["main"]

_TOKEN = re.compile(r"""
    (?P<string>[uUL8]*R"(?P<delim>[^(\s]*)\((?:.|\n)*?\)(?P=delim)"|[uUL8]*"(?:\\.|[^"\\\n])*"|[uUL8]*'(?:\\.|[^'\\\n])*')
  | (?P<ident>[A-Za-z_$][A-Za-z0-9_$]*)
  | (?P<number>\.?[0-9](?:[eEpP][+-]|[A-Za-z0-9_.'])*)
  | (?P<punct>::|->\*?|\.\.\.|<<=|>>=|<=>|[-+*/%&|^!=<>]=|&&|\|\||\+\+|--|<<|>>|\#\#|[^\sA-Za-z0-9_])
""", re.VERBOSE)


def reserved_by_standard(name: str) -> bool:
    return "__" in name or (name.startswith("_") and len(name) > 1 and name[1].isupper())


GPU_ONLY = ("<cuda_fp8.h>",)  # headers a translation that includes them can only be built by nvcc for


def includes_of_template() -> list[str]:
    return re.findall(r"^#include\s*(<[^>]+>|\"[^\"]+\")", TEMPLATE.read_text(), re.MULTILINE)


# --------------------------------------------------------------------------- preprocessing

def _run(cmd, cwd) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}")
    return proc.stdout


def translation_units(nvcc: str | None, cxx: str) -> list[tuple[str, str, str]]:
    """[(label, preprocessed text, macro dump)] of each view of an emitted .cu."""
    source = "".join(f"#include {inc}\n" for inc in includes_of_template())
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        cu = Path(tmp) / "empty.cu"
        cu.write_text(source)
        if nvcc:
            archs = [a for a in _run([nvcc, "--list-gpu-arch"], tmp).split() if a.startswith("compute_")]
            numbers = sorted({int(a.split("_")[1].rstrip("abf")) for a in archs})
            views = [(f"nvcc device sm_{n}", [f"-arch=compute_{n}"]) for n in (numbers[0], numbers[-1])]
            views.append(("nvcc host", [f"-arch=compute_{numbers[0]}", "-Xcompiler", "-U__CUDA_ARCH__"]))
            for label, flags in views:
                text = _run([nvcc, "-E", *flags, cu.name, "-o", "-"], tmp)
                macros = _run([nvcc, "-E", *flags, "-Xcompiler", "-dM", cu.name, "-o", "-"], tmp)
                out.append((label, text, macros))
        cpp = Path(tmp) / "empty_cpu.cpp"
        # the CPU runtime stands in for every header but those only a GPU build has (runtime/cpurun.py: gpu_only)
        cpp.write_text("".join(f"#include {inc}\n" for inc in includes_of_template() if inc not in GPU_ONLY))
        base = [cxx, "-std=c++17", "-E", "-x", "c++", "-I", str(CPU_HEADER.parent / "cpu_include"),  # stand-ins
                "-include", str(CPU_HEADER), cpp.name]
        out.append(("g++ CPU runtime", _run(base, tmp), _run(base[:-1] + ["-dM", cpp.name], tmp)))
    return out


def macro_names(dump: str) -> set[str]:
    return set(re.findall(r"^#define\s+([A-Za-z_][A-Za-z0-9_]*)", dump, re.MULTILINE))


# --------------------------------------------------------------------------- declarations at global scope

def tokens(text: str) -> list[str]:
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    out = []
    for m in _TOKEN.finditer(text):
        if m.group("string"):
            out.append('""')
        elif m.group("number"):
            out.append("0")
        else:
            out.append(m.group(0))
    return out


OPEN, CLOSE = {"(": ")", "[": "]", "{": "}"}, {")", "]", "}"}
SKIP_GROUP_AFTER = {"__attribute__", "__attribute", "__declspec", "alignas", "__asm__", "__asm", "asm", "throw",
                    "noexcept", "decltype", "__typeof__", "typeof", "static_assert", "_Static_assert",
                    "__alignof__", "alignof", "sizeof"}


def _match(toks, i) -> int:
    """Index just past the bracket group that opens at toks[i]."""
    depth = 0
    while i < len(toks):
        t = toks[i]
        if t in OPEN:
            depth += 1
        elif t in CLOSE:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def _match_angle(toks, i) -> int:
    """Index just past a template's <...> that opens at toks[i] (brackets inside are skipped whole)."""
    depth = 0
    while i < len(toks):
        t = toks[i]
        if t in OPEN:
            i = _match(toks, i)
            continue
        if t == "<":
            depth += 1
        elif t == ">":
            depth -= 1
        elif t == ">>":
            depth -= 2
        if depth <= 0:
            return i + 1
        i += 1
    return i


def declared_names(decl: list[str], found: set[str]) -> None:
    """Names one global declaration (its tokens, without the final ; or body) declares; over-collects the
    type names it mentions, which are declared names too."""
    if decl and decl[0] == "using":
        if len(decl) > 1 and decl[1] == "namespace":
            found.add("using namespace " + "".join(decl[2:]))  # flagged: would expose a whole namespace
            return
        if "=" in decl:
            found.add(decl[1])
        elif decl[-1][0].isalpha() or decl[-1][0] == "_":
            found.add(decl[-1])
        return
    i, params, before = 0, set(), set(found)
    while i < len(decl):
        t = decl[i]
        if t in SKIP_GROUP_AFTER and i + 1 < len(decl) and decl[i + 1] == "(":
            i = _match(decl, i + 1)
            continue
        if t == "template" and i + 1 < len(decl) and decl[i + 1] == "<":
            end = _match_angle(decl, i + 1)
            params |= {decl[k] for k in range(i + 2, end - 1)
                       if re.match(r"[A-Za-z_]", decl[k]) and decl[k + 1] in (",", ">", "=", "...", ">>")}
            i = end
            continue
        if t == "operator":  # operator+, operator new, operator(): not a name a user can write
            i += 2
            continue
        if t == "=":  # an initializer: skip to the next declarator
            while i < len(decl) and decl[i] != ",":
                i = _match(decl, i) if decl[i] in OPEN else i + 1
            continue
        if t == "<" and i > 0 and re.match(r"[A-Za-z_]", decl[i - 1]):
            i = _match_angle(decl, i)  # template arguments: types mentioned, not declared
            continue
        if t in OPEN:
            if t == "(" and i + 2 < len(decl) and decl[i + 1] in ("*", "&", "^") and \
                    re.match(r"[A-Za-z_]", decl[i + 2]):
                found.add(decl[i + 2])  # a function pointer: void (*name)(int)
            i = _match(decl, i)
            continue
        if re.match(r"[A-Za-z_]", t):
            qualified = (i > 0 and decl[i - 1] == "::") or (i + 1 < len(decl) and decl[i + 1] == "::")
            if not qualified:
                found.add(t)
        i += 1
    found -= params - before  # a template's parameter names are its own, not global ones


def global_names(toks: list[str]) -> set[str]:
    """Names declared where a translated function sees them unqualified: the global namespace, extern "C"
    blocks and unnamed namespaces (named namespaces and class bodies are skipped)."""
    found: set[str] = set()
    scopes: list[bool] = []  # per open brace: True if its names are global
    decl: list[str] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        visible = all(scopes)
        if t == "}":
            if scopes:
                scopes.pop()
            decl = []
            i += 1
            continue
        if t == ";":
            if visible and decl:
                declared_names(decl, found)
            decl = []
            i += 1
            continue
        if t == "{":
            head = decl
            if head[:1] == ["namespace"] or head[:2] == ["inline", "namespace"]:
                named = [x for x in head if x not in ("inline", "namespace") and re.match(r"[A-Za-z_]", x)]
                if visible and named:
                    found.add(named[0])  # a local of that name would hide the namespace from `name::`
                scopes.append(not named or head[0] == "inline")  # an inline namespace's names are its parent's
                decl = []
                i += 1
                continue
            if head[:1] == ["extern"] and len(head) == 2 and head[1] == '""':
                scopes.append(True)
                decl = []
                i += 1
                continue
            end = _match(toks, i)
            if visible:
                kinds = [x for x in head if x in ("enum", "struct", "class", "union")]
                if kinds and kinds[0] == "enum" and not any(x in ("class", "struct") for x in head):
                    _enumerators(toks[i + 1:end - 1], found)
                if kinds and "(" not in head:  # a class or enum body: keep reading its declarators
                    decl = head + ["{}"]
                    i = end
                    continue
                if _top_level(head, "="):  # a variable's brace initializer
                    decl = head + ["{}"]
                    i = end
                    continue
                declared_names(head, found)  # a function definition
            decl = []
            i = end
            continue
        decl.append(t)
        i += 1
    return {n for n in found if n != "{}"}


def _top_level(toks: list[str], wanted: str) -> bool:
    i = 0
    while i < len(toks):
        if toks[i] == wanted:
            return True
        i = _match(toks, i) if toks[i] in OPEN else i + 1
    return False


def _enumerators(body: list[str], found: set[str]) -> None:
    i = 0
    expect_name = True
    while i < len(body):
        t = body[i]
        if expect_name and re.match(r"[A-Za-z_]", t):
            found.add(t)
            expect_name = False
        elif t == ",":
            expect_name = True
        elif t in OPEN:
            i = _match(body, i)
            continue
        i += 1


# --------------------------------------------------------------------------- the data file

def tool_versions(nvcc: str | None, cxx: str) -> list[str]:
    out = []
    if nvcc:
        out.append("nvcc " + _run([nvcc, "--version"], ".").strip().splitlines()[-2].split(",")[-1].strip())
    out.append(_run([cxx, "--version"], ".").splitlines()[0])
    return out


def generate(nvcc: str | None, cxx: str) -> tuple[list[str], dict[str, set[str]]]:
    """(header lines, {"keyword"|"macro"|"declared": names})."""
    kinds = {"keyword": set(CXX_KEYWORDS) | set(CXX_LANGUAGE_NAMES), "macro": set(), "declared": set()}
    flagged = set()
    for _, text, macros in translation_units(nvcc, cxx):
        kinds["macro"] |= macro_names(macros)
        names = global_names(tokens(text))
        flagged |= {n for n in names if n.startswith("using namespace")}
        kinds["declared"] |= {n for n in names if not n.startswith("using namespace")}
    if flagged:
        print("warning: a header exposes a whole namespace at global scope: " + ", ".join(sorted(flagged)),
              file=sys.stderr)
    for kind in kinds:
        kinds[kind] = {n for n in kinds[kind] if not reserved_by_standard(n)}
    kinds["macro"] -= kinds["keyword"]
    kinds["declared"] -= kinds["keyword"] | kinds["macro"]
    header = ["# Generated by tools/reserved_names.py: do not edit; run it again after changing the .cu template's",
              "# #includes or translator/runtime/n2c_cpu.h. Identifiers a translated .cu can see (C++ keywords,",
              "# macros, names declared at global scope), without those the standard reserves (__x, _X).",
              "# toolchain: " + "; ".join(tool_versions(nvcc, cxx))]
    return header, kinds


def render(header: list[str], kinds: dict[str, set[str]]) -> str:
    lines = list(header)
    for kind in ("keyword", "macro", "declared"):
        lines.append(f"[{kind}]")
        lines += sorted(kinds[kind])
    return "\n".join(lines) + "\n"


def parse(text: str) -> tuple[str, dict[str, set[str]]]:
    """(toolchain line, kinds) of a data file."""
    toolchain, kinds, kind = "", {}, None
    for line in text.splitlines():
        if line.startswith("# toolchain:"):
            toolchain = line.split(":", 1)[1].strip()
        elif line.startswith("#") or not line.strip():
            continue
        elif line.startswith("["):
            kind = line.strip("[]")
            kinds[kind] = set()
        else:
            kinds[kind].add(line.strip())
    return toolchain, kinds


def find_nvcc() -> str | None:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home and (Path(home) / "bin" / "nvcc").exists():
        return str(Path(home) / "bin" / "nvcc")
    return shutil.which("nvcc")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed file instead of writing")
    parser.add_argument("--output", default=str(DATA))
    args = parser.parse_args(argv)
    nvcc = find_nvcc()
    if nvcc is None:
        print("error: nvcc not found (set CUDA_HOME); the data file needs the CUDA headers", file=sys.stderr)
        return 2
    cxx = os.environ.get("CXX", "g++")
    text = render(*generate(nvcc, cxx))
    if args.check:
        same = Path(args.output).read_text() == text
        print("up to date" if same else f"{args.output} differs from a fresh run: run tools/reserved_names.py")
        return 0 if same else 1
    Path(args.output).write_text(text)
    _, kinds = parse(text)
    print(f"wrote {args.output}: " + ", ".join(f"{len(v)} {k}s" for k, v in kinds.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
