"""The import mode's launches at a script's top level, continued: values computed after one it did not run.

While the module is imported, a launch of one of its kernels is seen for its types and not run (a tutorial's
workload would take the simulator hours; runentries.py). A value the module computes after such a launch, from
its results (`LIMIT = np.float32(hits[0])`), then differs from what Numba, running the script, compiles into a
kernel that reads it. run_import asks for such values here, and imports the module again with its launches run
where there are any; where that fails too, each is noted at its assignment.
"""

from __future__ import annotations

import ast

VALUE_KINDS = ("number", "tuple", "array", "dtype")


def set_after_skipped(source: str, result: dict) -> list:
    """(name, line, col) of each top-level assignment, after a skipped launch, of a name a kernel reads as a value,
    computed from what that launch could have changed: its arguments, and what is computed from them in turn
    (`LIMIT = np.float32(hits[0])`; `SCALE = np.float32(5)` is the same whatever the launch did)."""
    skipped = set(result.get("skipped_launches") or [])
    if not skipped:
        return []
    read = {name for entry in result.get("kernels", []) for name, desc in entry.get("free", {}).items()
            if desc.get("kind") in VALUE_KINDS}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    nodes = [n for stmt in tree.body if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
             for n in ast.walk(stmt)]
    changed: set = set()  # names whose values a skipped launch could have changed, in source order
    found = []
    for node in sorted(nodes, key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) and node.lineno in skipped:
            changed |= {n.id for a in node.args for n in ast.walk(a) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and changed and node.value is not None:
            if not {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)} & changed:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            changed |= names
            found += [(name, node.lineno, node.col_offset) for name in sorted(names & read)]
    return found
