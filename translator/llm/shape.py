"""a model's code, as tokens -> the problems of its namespace-scope items and bodies: the closed shape of device code.

    struct / union NAME { plain members; };          enum [class] [NAME] { A [= constant], ... };
    typedef TYPE NAME;   using NAME = TYPE;          (TYPE: arithmetic, a struct of the answer, pointers)
    [static] [const|constexpr] [__constant__|__device__] ARITHMETIC NAME[N]... [= constant | {constants}];
    [template <...>] __device__ ... NAME(params) { body }        the __global__ kernel, exactly as told

and nothing else at namespace scope: nothing there can run code when the file is loaded (no object of
class type, no initialiser that calls anything, no attribute, no prototype that could name a host
function). Bodies add: no local types, no `static` but `static __shared__` and `static constexpr`, no
`template`, no `__global__`/`__constant__`, `using` only as an alias.
"""

from __future__ import annotations

from .lexer import Token, lex
from .names import ARITHMETIC_WORDS, CONSTANT_MACROS, DEVICE_API, TYPE_NAMES

FUNCTION_SPECIFIERS = {"__device__", "static", "inline", "__forceinline__", "__noinline__", "constexpr"}
VARIABLE_SPECIFIERS = {"static", "const", "constexpr", "__constant__", "__device__", "volatile"}
TYPE_WORDS = ARITHMETIC_WORDS | {"void", "const", "volatile", "auto", "__restrict__"} | TYPE_NAMES - {"dim3", "uint3"}


def normalise_signature(text: str) -> str:
    """A declaration with whitespace only where it separates two words: `const float * x` -> `const float*x`."""
    return " ".join(" ".join(t.text for t in lex(text).tokens).split()).replace(" *", "*").replace("* ", "*") \
        .replace(" ,", ",").replace(", ", ",").replace(" (", "(").replace("( ", "(").replace(" )", ")")



class Shape:
    """The namespace-scope items of the answer, each of the closed shapes above, and the rules of bodies."""

    def __init__(self, toks: list[Token], signature: str, reserved: set[str], constants: set[str]):
        self.toks = toks
        self.signature = signature
        self.reserved = reserved
        self.constants = set(constants) | CONSTANT_MACROS  # names an initialiser may use
        self.structs: set[str] = set()
        self.arith_aliases: set[str] = set()
        self.other_types: set[str] = set()
        self.out: list[str] = []
        self.kernels = 0
        self.match = _brackets(toks)

    def problems(self) -> list[str]:
        if isinstance(self.match, str):
            return [self.match]
        i = 0
        while i < len(self.toks):
            i = self.item(i)
        if self.kernels == 0:
            self.out.append(f"no __global__ function: the answer must define `{self.signature}`")
        return self.out

    def refuse(self, tok: Token, text: str) -> None:
        self.out.append(f"line {tok.line}: {text}")

    # ------------------------------------------------------------ items
    def item(self, i: int) -> int:
        """Check the item starting at token I; the index after it."""
        t = self.toks[i]
        if t.text == ";":
            return i + 1
        if t.kind == "pragma":
            self.refuse(t, "#pragma unroll belongs before a loop, inside a function")
            return i + 1
        if t.text == "template":
            return self.template(i)
        if t.text in ("struct", "union"):
            return self.aggregate(i)
        if t.text == "enum":
            return self.enum(i)
        if t.text in ("typedef", "using"):
            return self.alias(i)
        j = i
        while j < len(self.toks) and self.toks[j].text not in ("(", "=", ";", "{", "["):
            j += 1
        if j < len(self.toks) and self.toks[j].text == "(":
            return self.function(i, j, set())
        return self.variable(i)

    def end_of_statement(self, i: int) -> int:
        """The index after the `;` that ends the statement at I (brackets skipped)."""
        while i < len(self.toks) and self.toks[i].text != ";":
            i = self.match.get(i, i) + 1
        return i + 1

    def template(self, i: int) -> int:
        toks = self.toks
        if i + 1 >= len(toks) or toks[i + 1].text != "<":
            self.refuse(toks[i], "'template' is allowed only before a __device__ function: template <typename T>")
            return self.end_of_statement(i)
        j, params = i + 2, set()
        while j < len(toks) and toks[j].text != ">":
            tok = toks[j]
            if tok.kind == "ident" and toks[j - 1].text in ({"typename", "class", ","} | ARITHMETIC_WORDS | {"<"}) \
                    and tok.text not in ARITHMETIC_WORDS | {"typename", "class"}:
                params.add(tok.text)
            elif tok.text not in ({"typename", "class", ","} | ARITHMETIC_WORDS) and tok.kind != "number":
                self.refuse(tok, f"'{tok.text}' in a template parameter list (allowed: typename T, int N)")
            j += 1
        k = j + 1
        while k < len(toks) and toks[k].text not in ("(", "=", ";", "{"):
            k += 1
        if k < len(toks) and toks[k].text == "(":
            return self.function(j + 1, k, params)
        self.refuse(toks[i], "'template' is allowed only before a __device__ function")
        return self.end_of_statement(j + 1)

    def function(self, i: int, paren: int, tparams: set[str]) -> int:
        toks = self.toks
        head = toks[i:paren]
        close = self.match[paren]
        j, stray = close + 1, None
        while j < len(toks) and toks[j].text not in ("{", ";"):
            if stray is None and toks[j].text not in {"noexcept", "->", "*", "&", "const"} | TYPE_WORDS | \
                    self.type_names() | tparams:
                stray = toks[j]
                self.refuse(stray, f"'{stray.text}' after a function's parameters")
            j = self.match.get(j, j) + 1 if toks[j].text in "([" else j + 1
        if not head or head[-1].kind != "ident":
            self.refuse(toks[paren], "top-level code must be a __device__ or __global__ function, a constant or a "
                                     "type")
            return self.end_of_statement(paren)
        name = head[-1].text
        words = {t.text for t in head}
        if j >= len(toks) or toks[j].text == ";":
            self.refuse(head[0], f"'{name}' is declared without a body: define functions where they are declared "
                                 "(a declaration could name a host library function)")
            return j + 1
        end = self.match[j] + 1
        if "__global__" in words:
            self.kernel(head, i, j)
        elif "__device__" not in words:
            self.refuse(head[0], f"the function '{name}' must be __device__ (host functions are not allowed)")
        else:
            allowed = FUNCTION_SPECIFIERS | TYPE_WORDS | self.type_names() | tparams | {"*", "&", "unsigned", name}
            for t in head:
                if t.text not in allowed:
                    self.refuse(t, f"'{t.text}' in the declaration of '{name}' (allowed: __device__, static, inline, "
                                   "__forceinline__, __noinline__, constexpr and the return type)")
                    break
            if name in self.reserved or name.endswith("_launch") or name in DEVICE_API:
                self.refuse(head[-1], f"'{name}' is already defined by the rest of the file, the CUDA device API or "
                                      "numba2cuda (or reserved for it); give the function another name")
        self.body(j + 1, end - 1)
        return end

    def kernel(self, head: list[Token], i: int, brace: int) -> None:
        self.kernels += 1
        if self.kernels == 2:
            self.refuse(head[0], f"a second __global__ function: define exactly one, `{self.signature}`; helpers must "
                                 "be __device__ functions")
        got = normalise_signature(" ".join(t.text for t in self.toks[i:brace]))
        if got != normalise_signature(self.signature):
            self.refuse(head[0], f"the __global__ function must be declared exactly `{self.signature}` (not a "
                                 f"template, no extra qualifiers); found `{got}`")

    def body(self, start: int, end: int) -> None:
        toks = self.toks
        for k in range(start, end):
            t, nxt = toks[k], toks[k + 1].text if k + 1 < end else ""
            after = toks[k + 2].text if k + 2 < end else ""
            if t.text == "static" and nxt not in ("__shared__", "constexpr"):
                self.refuse(t, "'static' local variables are not allowed (only static __shared__ and static "
                               "constexpr): their initialisation is host code in the CPU runtime")
            elif t.text in ("enum", "class") or (t.text in ("struct", "union") and (nxt == "{" or after in ("{", ":"))):
                self.refuse(t, f"a local {t.text} definition: define types at namespace scope, as plain structs")
            elif t.text == "template" or t.text in ("__global__", "__constant__"):
                self.refuse(t, f"'{t.text}' inside a function")
            elif t.text == "using" and not (toks[k + 1].kind == "ident" and after == "="):
                self.refuse(t, "'using' is allowed only as an alias: using NAME = TYPE;")

    def aggregate(self, i: int) -> int:
        toks = self.toks
        kind = toks[i].text
        if i + 2 >= len(toks) or toks[i + 1].kind != "ident" or toks[i + 2].text != "{":
            self.refuse(toks[i], f"a {kind} must be defined as `{kind} NAME {{ members }};` (plain members only)")
            return self.end_of_statement(i)
        name, close = toks[i + 1].text, self.match[i + 2]
        self.structs.add(name)
        j = i + 3
        while j < close:
            stmt_end = j
            while stmt_end < close and toks[stmt_end].text != ";":
                stmt_end += 1
            self.member(toks[j:stmt_end], name)
            j = stmt_end + 1
        if close + 1 >= len(toks) or toks[close + 1].text != ";":
            self.refuse(toks[close], f"nothing may follow the definition of {kind} {name} but ';' (no object of a "
                                     "struct type at namespace scope)")
            return self.end_of_statement(close + 1)
        return close + 2

    def member(self, decl: list[Token], struct: str) -> None:
        if not decl:
            return
        types = TYPE_WORDS | self.type_names()
        words = [t.text for t in decl]
        if not decl[0].text in types or any(w in ("(", "=", "{", ":", "static", "operator") for w in words):
            self.refuse(decl[0], f"struct {struct} may hold only plain members (`float x, y; int n[4];`): no member "
                                 "functions, constructors, initialisers or static members")
            return
        self.declarators(decl, types, f"a member of {struct}")

    def declarators(self, decl: list[Token], types: set[str], what: str) -> list[str]:
        """The names a `TYPE a, *b, c[N]` declaration declares; a problem for anything else."""
        names, k = [], 0
        while k < len(decl) and decl[k].text in types | {"*", "&"}:
            k += 1
        while k < len(decl):
            while k < len(decl) and decl[k].text in ("*", "const"):
                k += 1
            if k >= len(decl) or decl[k].kind != "ident":
                self.refuse(decl[min(k, len(decl) - 1)], f"cannot read {what}: write `TYPE NAME[N];`")
                return names
            names.append(decl[k].text)
            k += 1
            while k < len(decl) and decl[k].text == "[":
                close = next((m for m in range(k, len(decl)) if decl[m].text == "]"), len(decl) - 1)
                self.constant_expr(decl[k + 1:close], what)
                k = close + 1
            if k < len(decl) and decl[k].text != ",":
                self.refuse(decl[k], f"'{decl[k].text}' in {what}")
                return names
            k += 1
        return names

    def enum(self, i: int) -> int:
        toks = self.toks
        j = i + 1
        while j < len(toks) and toks[j].text not in ("{", ";"):
            if toks[j].text not in ({"class", "struct", ":"} | ARITHMETIC_WORDS | TYPE_NAMES) and \
                    toks[j].kind != "ident":
                break
            j += 1
        if j >= len(toks) or toks[j].text != "{":
            self.refuse(toks[i], "an enum must be defined as `enum NAME { A, B = 2 };`")
            return self.end_of_statement(i)
        if toks[i + 1].kind == "ident":
            self.arith_aliases.add(toks[i + 1].text)
        close = self.match[j]
        k = j + 1
        while k < close:
            stop = k
            while stop < close and toks[stop].text != ",":
                stop = self.match.get(stop, stop) + 1
            if toks[k].kind != "ident":
                self.refuse(toks[k], "an enumerator must be a name, optionally `= constant`")
            else:
                if stop > k + 1:
                    if toks[k + 1].text != "=":
                        self.refuse(toks[k + 1], f"'{toks[k + 1].text}' after the enumerator {toks[k].text}")
                    self.constant_expr(toks[k + 2:stop], f"the enumerator {toks[k].text}")
                self.constants.add(toks[k].text)
            k = stop + 1
        if close + 1 >= len(toks) or toks[close + 1].text != ";":
            self.refuse(toks[close], "nothing may follow an enum's definition but ';'")
            return self.end_of_statement(close + 1)
        return close + 2

    def alias(self, i: int) -> int:
        toks = self.toks
        end = self.end_of_statement(i) - 1
        decl = toks[i + 1:end]
        if toks[i].text == "using":
            if len(decl) < 3 or decl[0].kind != "ident" or decl[1].text != "=":
                self.refuse(toks[i], "'using' is allowed only as an alias: using NAME = TYPE;")
                return end + 1
            name, target = decl[0].text, decl[2:]
        else:
            if len(decl) < 2 or decl[-1].kind != "ident":
                self.refuse(toks[i], "a typedef must be `typedef TYPE NAME;`")
                return end + 1
            name, target = decl[-1].text, decl[:-1]
        words = [t.text for t in target]
        known = TYPE_WORDS | self.type_names() | {"*", "&", "struct", "union"}
        bad = next((t for t in target if t.text not in known), None)
        if bad is not None:
            self.refuse(bad, f"'{bad.text}' in the alias {name}: an alias may name an arithmetic type, a struct of the "
                             "answer or a pointer to one")
        elif "*" in words or any(w in self.structs for w in words):
            self.other_types.add(name)
            if any(w in self.structs for w in words) and "*" not in words:
                self.structs.add(name)
        else:
            self.arith_aliases.add(name)
        return end + 1

    def variable(self, i: int) -> int:
        toks = self.toks
        end = self.end_of_statement(i) - 1
        decl = toks[i:end]
        specs = set()
        k = 0
        while k < len(decl) and decl[k].text in VARIABLE_SPECIFIERS | {"__shared__"}:
            specs.add(decl[k].text)
            k += 1
        type_start = k
        arithmetic = ARITHMETIC_WORDS | TYPE_NAMES - {"dim3", "uint3"} | self.arith_aliases | {"const"}
        while k < len(decl) and decl[k].text in arithmetic:
            k += 1
        first = decl[0] if decl else toks[min(i, len(toks) - 1)]
        if k == type_start or k >= len(decl) or decl[k].kind != "ident":
            found = " ".join(t.text for t in decl[:8])
            what = "an object of a struct type" if any(t.text in self.structs for t in decl[:k + 1]) else "top-level code"
            self.refuse(first, f"{what} at namespace scope: top-level code must be a __device__ or __global__ "
                               "function, a type, or a __constant__/__device__/constexpr variable of an arithmetic "
                               f"type with a constant initialiser; found `{found}`")
            return end + 1
        if "__shared__" in specs:
            self.refuse(first, "__shared__ variables belong inside the kernel")
        if not specs & {"__constant__", "__device__", "constexpr", "const"}:
            self.refuse(first, "a namespace-scope variable must be __constant__, __device__ or constexpr")
        const = bool(specs & {"const", "constexpr"}) or "const" in {t.text for t in decl[type_start:k]}
        # declarators: NAME [N]... [= init | {init}] , ...
        while k < len(decl):
            if decl[k].kind != "ident":
                self.refuse(decl[k], f"'{decl[k].text}' where a variable's name belongs (no pointers or functions at "
                                     "namespace scope)")
                return end + 1
            name = decl[k]
            if name.text in self.constants - CONSTANT_MACROS or name.text in self.reserved:
                self.refuse(name, f"'{name.text}' is already declared by the file: use it, do not redeclare it")
            k += 1
            while k < len(decl) and decl[k].text == "[":
                close = self.match[i + k]
                self.constant_expr(toks[i + k + 1:close], f"the extent of {name.text}")
                k = close - i + 1
            if k < len(decl) and decl[k].text in ("=", "{"):
                start = k + 1 if decl[k].text == "=" else k
                stop = start
                while stop < len(decl) and decl[stop].text != ",":
                    stop = self.match.get(i + stop, i + stop) - i + 1
                self.constant_expr(decl[start:stop], f"the initialiser of {name.text}")
                k = stop
            if const:
                self.constants.add(name.text)
            if k < len(decl) and decl[k].text != ",":
                self.refuse(decl[k], f"'{decl[k].text}' after the variable {name.text}")
                return end + 1
            k += 1
        return end + 1

    def constant_expr(self, expr: list[Token], what: str) -> None:
        """Literals, operators and constants only: an initialiser that runs no code when the file is loaded."""
        casts = ARITHMETIC_WORDS | TYPE_NAMES | self.arith_aliases | {"sizeof", "static_cast", "true", "false"}
        for k, t in enumerate(expr):
            nxt = expr[k + 1].text if k + 1 < len(expr) else ""
            if t.kind == "ident" and t.text not in self.constants | casts:
                self.refuse(t, f"'{t.text}' in {what}: a namespace-scope initialiser may use only literals, "
                               "constants and casts (it must not run code when the file is loaded)")
                return
            if t.kind == "ident" and nxt == "(" and t.text not in casts:
                self.refuse(t, f"a call in {what}: a namespace-scope initialiser may not call anything")
                return
            if t.kind == "string" or t.text in (";", "=", "++", "--", ".", "->", "[", "+=", "-=", "::", "..."):
                self.refuse(t, f"'{t.text}' in {what}: a namespace-scope initialiser may use only literals, "
                               "constants and casts")
                return

    def type_names(self) -> set[str]:
        return self.structs | self.arith_aliases | self.other_types


def _brackets(toks: list[Token]) -> dict | str:
    """{index of an opening bracket: index of its closing one}, or a problem if they do not pair up."""
    pairs, stack, match = {")": "(", "]": "[", "}": "{"}, [], {}
    for k, t in enumerate(toks):
        if t.kind != "punct":
            continue
        if t.text in "([{":
            stack.append(k)
        elif t.text in pairs:
            if not stack or toks[stack[-1]].text != pairs[t.text]:
                return f"line {t.line}: unbalanced '{t.text}'"
            match[stack.pop()] = k
    if stack:
        return f"line {toks[stack[-1]].line}: unbalanced '{toks[stack[-1]].text}': the code is cut off"
    return match
