"""autotune results <-> `<stem>.n2c-tune.json` beside the module: {kernel: {param: {size label: fastest value}}}.

`numba2cuda bench --autotune --record` writes the file; `numba2cuda.load()` and packaged modules read it
so that `kernel.tuned("tw", size="bench", default=16)` can answer.  The table is only ever consulted when
the caller asks: a launch never changes a value its caller passes.  Imports neither torch nor numba.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

FORMAT = "numba2cuda-tune/1"
SUFFIX = ".n2c-tune.json"


def tuning_path(module_path) -> Path:
    """kernels/matmul.py -> kernels/matmul.n2c-tune.json (the default place bench --record writes)."""
    path = Path(module_path)
    return path.with_name(path.stem + SUFFIX)


def _valid_table(table) -> bool:
    """{kernel: {param: {size label: int}}}, nothing else: a hand-edited file must not crash a load."""
    if not isinstance(table, dict):
        return False
    for params in table.values():
        if not isinstance(params, dict):
            return False
        for by_size in params.values():
            if not isinstance(by_size, dict):
                return False
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in by_size.values()):
                return False
    return True


def read_tuning(path) -> dict:
    """The {kernel: {param: {size: value}}} table of a tuning file; {} if it is absent.

    A file that cannot be read or has the wrong shape is ignored with a warning (the kernels still load:
    tuned() then returns the caller's default)."""
    path = Path(path)
    if not path.is_file():
        return {}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        table = doc.get("kernels") if isinstance(doc, dict) else None
    except (OSError, ValueError) as exc:
        warnings.warn(f"{path}: ignoring the tuning file: {exc}", stacklevel=2)
        return {}
    if not _valid_table(table):
        warnings.warn(f"{path}: ignoring the tuning file: expected {{\"kernels\": {{kernel: {{param: "
                      f"{{size: int}}}}}}}}", stacklevel=2)
        return {}
    return table


def merge_tuning(old: dict, new: dict) -> dict:
    """`new` recorded over `old`, size by size: other kernels, parameters and sizes are kept."""
    out = {k: {p: dict(s) for p, s in params.items()} for k, params in old.items()}
    for kernel, params in new.items():
        for param, by_size in params.items():
            out.setdefault(kernel, {}).setdefault(param, {}).update({str(s): int(v) for s, v in by_size.items()})
    return out


def tuning_document(table: dict, env: dict | None = None, module: str | None = None) -> dict:
    """What the file holds: the table plus where and when it was measured."""
    return {"format": FORMAT, "module": module, "env": env or {}, "kernels": table}


def write_tuning(path, new: dict, env: dict | None = None, module: str | None = None) -> dict:
    """Merge `new` into the file at PATH (atomically) and return the merged table."""
    from ..atomic import write_atomically

    path = Path(path)
    merged = merge_tuning(read_tuning(path), new)
    text = json.dumps(tuning_document(merged, env, module), indent=2, sort_keys=True) + "\n"
    write_atomically(path, text)
    return merged
