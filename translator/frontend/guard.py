"""source bytes -> text libcst can read safely: decoded as PEP 263 says, parsed first by CPython's own parser
(native, linear, with its own limits: "too many nested parentheses"), and bounded in nesting and size.

libcst's native parser segfaults on deep input (2000 nested parentheses) and its time grows with the depth
of each statement; the typer, the lowering and the C printer recurse once per level. So before libcst sees a
module, its CPython syntax tree is walked (iteratively) for two numbers, each refused with a located error:

* nesting: the levels from the module down to each node, counted as libcst and the lowering nest them
  (`a and b and c` is one level per operand there; so is each argument of min()/max(), lowered pairwise).
  Above MAX_NESTING the statement is refused where the limit is crossed, as CPython refuses 201 parentheses.
* size: the number of nodes (what libcst and the lowering spend time on) and their weight, the sum of every
  node's nesting level (what a deep chain costs: libcst's parse time grows with depth squared). Above
  MAX_NODES or MAX_WEIGHT the module is refused at the statement that crosses the limit, so any input is
  translated or refused within seconds, and the work below both limits is linear in the input.
"""

from __future__ import annotations

import ast
import io
import tokenize

from ..errors import Diagnostic, Location, UserError

#: a module whose text is longer is refused before anything parses it (CPython parses 1 MiB in about a second)
MAX_SOURCE_CHARS = 1 << 20
#: CPython parses sums of about 3000 terms at its default settings; numba2cuda reads a third of that
MAX_NESTING = 1000
#: libcst, the lowering and the printer cost about 0.3 ms of CPU per node of ordinary code, parsed once however
#: many kernels are translated (measured: 900 small kernels, 93,600 nodes, translate whole in 33 s, one of them in
#: 7 s); the largest module of public kernels seen has 27,400 nodes (60 kernels), the largest of kernels/ 901
MAX_NODES = 150_000
#: a chain of 1000 levels weighs 2,000,000 and translates in about 1.5 s: its depth, not its node count, costs
MAX_WEIGHT = 2_000_000

SPLIT_HINT = "split it into several statements through intermediate variables"
MODULE_HINT = ("split long expressions into statements, and keep the kernels in a module of their own, without "
               "large data tables or host code")


def decode_source(data: bytes, path: str) -> str:
    """The module's text in the encoding its `# -*- coding: ... -*-` line (or BOM) declares, UTF-8 by default."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # an unknown encoding, or a BOM that contradicts the cookie
        line = exc.lineno or 1
        raise UserError([_diag(path, _lines_of(data), line, 0, "source encoding", str(exc.msg),
                               "declare an encoding Python knows, e.g. # -*- coding: utf-8 -*-")]) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        before = data[:exc.start]
        line = before.count(b"\n") + 1
        col = len(before[before.rfind(b"\n") + 1:].decode(encoding, errors="replace"))
        raise UserError([_diag(path, _lines_of(data), line, col, "source encoding",
                               f"byte 0x{data[exc.start]:02x} is not valid {encoding}",
                               "save the file as UTF-8, or declare its encoding: # -*- coding: latin-1 -*-")]) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    # Python reads \r\n and \r as line ends (universal newlines); libcst and the line numbers must agree
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _lines_of(data: bytes) -> list[str]:
    return data.decode("latin-1").splitlines()


def _diag(path, lines, line, col, construct, message, hint) -> Diagnostic:
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return Diagnostic(Location(path, line, col), construct, message, hint, text)


def check_source(source: str, path: str) -> None:
    """Raise a located UserError if libcst must not read `source`: a syntax error, too deep, or too big."""
    lines = source.splitlines()
    if len(source) > MAX_SOURCE_CHARS:
        raise UserError([_diag(path, lines, 1, 0, "module too large",
                               f"{len(source):,} characters; numba2cuda reads modules of up to "
                               f"{MAX_SOURCE_CHARS:,}", MODULE_HINT)])
    if "\0" in source:
        before = source[:source.index("\0")]
        line = before.count("\n") + 1
        raise UserError([_diag(path, lines, line, len(before) - before.rfind("\n") - 1, "syntax error",
                               "source code cannot contain null bytes", "remove the NUL character")])
    try:
        tree = compile(source, path, "exec", dont_inherit=True, flags=ast.PyCF_ONLY_AST)
        problem = _measure(tree)
        if problem is None:  # what only the compiler finds: a duplicate parameter, `return` outside a function
            compile(tree, path, "exec", dont_inherit=True)
    except SyntaxError as exc:  # CPython's own words: "too many nested parentheses", "expected ':'"
        line = exc.lineno or 1
        col = _char_col(lines, line, (exc.offset or 1) - 1, exc.text)
        raise UserError([_diag(path, lines, line, col, "syntax error", exc.msg,
                               "fix the Python syntax; the file must import cleanly")]) from None
    except (RecursionError, MemoryError):  # CPython's parser or compiler stack: a statement nested beyond it
        line, col = _longest_statement(source)
        raise UserError([_diag(path, lines, line, col, "expression nested too deeply",
                               "Python's own parser refuses it (too complex)", SPLIT_HINT)]) from None
    if problem is not None:
        kind, node, amount = problem
        line = getattr(node, "lineno", 1)
        col = _char_col(lines, line, getattr(node, "col_offset", 0))
        if kind == "nesting":
            raise UserError([_diag(path, lines, line, col, "expression nested too deeply",
                                   f"more than {MAX_NESTING} levels of nesting; numba2cuda reads at most "
                                   f"{MAX_NESTING}", SPLIT_HINT)])
        raise UserError([_diag(path, lines, line, col, "module too large",
                               f"its syntax tree passes numba2cuda's size limit at this statement ({MAX_NODES:,} "
                               f"nodes, or {MAX_WEIGHT:,} counting each once per level it is nested in)",
                               MODULE_HINT)])


def _char_col(lines, line, byte_col, text=None) -> int:
    """CPython reports UTF-8 byte offsets; diagnostics point at characters."""
    src = lines[line - 1] if 0 < line <= len(lines) else (text or "")
    if byte_col <= 0:
        return 0
    return len(src.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def _children(node, depth):
    """(child, its level) for each child, levels as libcst's tree and the lowered IR nest them."""
    chain = None
    if isinstance(node, ast.BoolOp):  # libcst: one BooleanOperation per operator, nested to the left
        chain = node.values
    elif isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name in ("min", "max") and len(node.args) > 2:
            chain = node.args  # lowered pairwise: min(min(a, b), c)
    if chain is not None:
        n = len(chain)
        levels = {id(v): depth + (n - 1 if k == 0 else n - k) for k, v in enumerate(chain)}
        return [(c, levels.get(id(c), depth + 1)) for c in ast.iter_child_nodes(node)]
    below = depth + 1
    if isinstance(node, (ast.Import, ast.ImportFrom)):  # libcst spells a.b.c as nested attributes
        names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
        below += max(n.count(".") for n in names)
    return [(c, below) for c in ast.iter_child_nodes(node)]


def _measure(tree):
    """("nesting" | "size", node, amount) for the first limit the tree passes, or None. Iterative: the tree
    may be deeper than Python's recursion limit."""
    weight = nodes = 0
    stack = [(child, 1, child, child) for child in reversed(tree.body)]
    while stack:
        node, depth, statement, located = stack.pop()
        if hasattr(node, "lineno"):
            located = node  # operators and contexts have no position: point at their expression
            if isinstance(node, ast.stmt):
                statement = node
        if depth > MAX_NESTING:
            return "nesting", located, depth
        weight += depth
        nodes += 1
        if weight > MAX_WEIGHT or nodes > MAX_NODES:
            return "size", statement, weight
        stack.extend((child, level, statement, located) for child, level in reversed(_children(node, depth)))
    return None


def _longest_statement(source: str) -> tuple[int, int]:
    """(line, col) of the logical line with the most tokens: where CPython's parser ran out of stack."""
    best, best_count, start, count = (1, 0), -1, None, 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING):
                continue
            if start is None:
                start, count = tok.start, 0
            count += 1
            if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                if count > best_count:
                    best, best_count = start, count
                start = None
    except (tokenize.TokenError, SyntaxError):
        pass
    return best
