"""--import-module: the module imported in a child process, as Numba's users run it, and its kernels' free names
resolved from the values that run gives (frontend/probe.py describes them as plain data).

Numba resolves a kernel's free names from the function's real globals and closure cells when it compiles;
reading the source cannot know a value computed by a call, a factory's arguments, or a kernel a project's own
machinery makes. Here the module is imported in a sandboxed child (scrubbed environment, a time limit, the CUDA
simulator unless the GPU is asked for), and what comes back is data, never code: numbers, tuples, dtypes,
NumPy arrays (as .npy), the names of modules and functions, and where each kernel's source is. The kernels are
then read from their source with libcst, as always, each in a scope whose names hold those values.
"""

from __future__ import annotations

import os
from pathlib import Path

import libcst as cst

from ..errors import Diagnostic, Location, Unsupported, UserError
from ..ir import typesys as T
from ..sandbox import ChildError, ChildFailed, Limits, Worker
from ..userimport import python3_source
from .constants import CONSTANT_MEMORY_BYTES, ConstArray, DeviceArray, Typed
from .info import STOOD_IN, FunctionInfo, ModuleInfo
from .scan import find_nodes
from .skipped import set_after_skipped
from .standins import NUMPY_BACKED, StandInDecided

MODES = ("sim", "gpu")
IMPORT_SECONDS = 120.0
#: arrays past this are described by size only: past constant memory they cannot be baked in anyway
MAX_ARRAY_BYTES = CONSTANT_MEMORY_BYTES


def project_import_mode(path) -> str | None:
    """`import_module = true` (or "gpu") in [tool.numba2cuda] of the pyproject.toml nearest to PATH."""
    try:
        import tomllib
    except ImportError:
        return None
    here = Path(path).resolve().parent
    for folder in [here, *here.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                with open(candidate, "rb") as f:
                    value = tomllib.load(f).get("tool", {}).get("numba2cuda", {}).get("import_module")
            except (OSError, tomllib.TOMLDecodeError):
                return None
            if value is True:
                return "sim"
            return value if value in MODES else None
    return None


def import_mode_of(args) -> str | None:
    """The import mode a command's ARGS ask for (--import-module, --import-module-gpu), else the project's."""
    asked = getattr(args, "import_module", None)
    if asked is True:
        return "sim"
    return asked or project_import_mode(args.file)


def run_import(path, mode: str = "sim", kernels=None, types: dict | None = None,
               run_launches: bool = False) -> tuple[dict, list]:
    """(description, arrays) of the module at PATH, imported in a child: under the CUDA simulator, or ("gpu")
    with the real CUDA target; then its tests and main() that reach a kernel the import left unfinished (or
    a function KERNELS, --kernel, names) run until it is launched (with TYPES, --types, if given: a launch with
    other types runs on). A failure to import: UserError with one Diagnostic saying why (parse_file notes it)."""
    env = {"NUMBA_ENABLE_CUDASIM": "1"} if mode == "sim" else {"NUMBA_ENABLE_CUDASIM": "0"}
    base = dict(os.environ)
    base.update(env)
    limits = Limits(wall_seconds=IMPORT_SECONDS, cpu_seconds=int(IMPORT_SECONDS) + 30,
                    address_space=None if mode == "gpu" else 16 << 30)
    try:
        with Worker(limits=limits, env=base, name="import of the module") as worker:
            result, arrays = worker.call("translator.frontend.probe:probe_module",
                                         {"path": str(path), "max_array_bytes": MAX_ARRAY_BYTES,
                                          "want": {k: str(v) for k, v in (types or {}).items()},
                                          "kernels": list(kernels or []), "run_launches": run_launches})
    except ChildError as exc:
        said = str(exc).splitlines()[0] if str(exc) else ""
        raise _unlocated(path, f"importing the module raised {exc.kind}: {said} (the module must import cleanly on "
                         "its own, as `python -c 'import MODULE'` would, under the CUDA simulator unless "
                         "--import-module-gpu)") from None
    except ChildFailed as exc:
        raise _unlocated(path, f"{exc.reason} (importing the module must not launch long work; keep it under "
                         f"`if __name__ == \"__main__\":`: the import mode waits {IMPORT_SECONDS:g} s)") from None
    failed = result.get("import_error") if isinstance(result, dict) else None
    if failed and result.get("skipped_launches") and not run_launches:
        # the script checks a launch's results as it runs (`assert np.allclose(out, ...)`): run its launches
        return run_import(path, mode, kernels, types, run_launches=True)
    if failed:
        raise import_failure(path, failed)
    if not run_launches and result.get("skipped_launches") and set_after_skipped(  # the source as the child read it
            python3_source(Path(path).read_text(encoding="utf-8", errors="replace"))[0], result):
        try:  # a value computed from a launch's results: import again, with the launches run, as Numba would
            return run_import(path, mode, kernels, types, run_launches=True)
        except UserError:
            pass  # noted in apply_kernels
    return result, arrays


def _unlocated(path, message: str) -> UserError:
    """A failure of the import's child itself (it died, or timed out): at the module's first line."""
    return UserError([Diagnostic(Location(str(path), 1, 0), "--import-module", message)])


def import_failure(path, failed: dict) -> UserError:
    """The module raised while it was imported: located at the statement of the module that raised."""
    lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    line = int(failed.get("line") or 0)
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    col = len(text) - len(text.lstrip())
    hint = ("the module must import cleanly on its own (as `python -c 'import MODULE'` would), under the CUDA "
            "simulator unless --import-module-gpu; without --import-module numba2cuda reads the source only")
    # a stand-in's refusal is numba2cuda's own stop, not an exception of the user's code: said without its name
    said = f"importing the module stopped: {failed['message']}" if failed["kind"] == StandInDecided.__name__ \
        else f"importing the module raised {failed['kind']}: {failed['message']}"
    return UserError([Diagnostic(Location(str(path), max(line, 1), col), "--import-module", said, hint, text)])


# ------------------------------------------------------------------ values -> the frontend's tables

def _constant(desc: dict, arrays: list):
    """A described value as a constant (int, float, bool, Typed, tuple, ConstArray), or None."""
    kind = desc["kind"]
    if kind == "number":
        dtype, value = desc["dtype"], desc["value"]
        if dtype in ("int", "float", "bool"):
            return {"int": int, "float": float, "bool": bool}[dtype](value)
        scalar = T.scalar_by_name(dtype)
        if scalar is None:
            return None
        if scalar in (T.INT64, T.FLOAT64):
            return float(value) if scalar.is_float else int(value)
        return Typed(bool(value) if scalar.kind == "b" else value, scalar)
    if kind == "tuple":
        items = [_constant(d, arrays) for d in desc["items"]]
        return None if any(i is None for i in items) else tuple(items)
    if kind == "array" and "index" in desc:
        return ConstArray.from_numpy(arrays[desc["index"]])
    return None


def apply_value(view: ModuleInfo, name: str, desc: dict, arrays: list) -> None:
    """What NAME holds when the module has run, in VIEW's tables (kernels and functions are wired later; a
    device array, a declare_device function: as the source tells them)."""
    kind = desc["kind"]
    value = _constant(desc, arrays)
    if value is not None:
        view.constants[name] = value
        view.nonconstant.pop(name, None)
        view.needs_run.discard(name)
        view.aliases.pop(name, None)
    elif kind == "array":
        view.constants.pop(name, None)
        view.nonconstant[name] = (f"is a NumPy array of {desc['too_big']} bytes; constant memory holds "
                                  f"{CONSTANT_MEMORY_BYTES // 1024} KiB, so it must be a kernel argument")
        view.needs_run.discard(name)
    elif kind == "dtype":
        view.constants.pop(name, None)
        view.nonconstant.pop(name, None)
        view.aliases[name] = f"numpy.{desc['name']}"
    elif kind == "record":  # a structured dtype: its name for the C struct, --types and signatures
        view.module_info.run_records[name] = desc["type"]
        view.module_info.records = None  # read again, with this one (a test's dtype, read after the module's)
    elif kind == "device_array":
        view.constants[name] = DeviceArray(tuple(desc["shape"]), T.scalar_by_name(desc["dtype"]))
        view.nonconstant.pop(name, None)
        view.needs_run.discard(name)
        view.aliases.pop(name, None)
    elif kind == "int_enum":  # imported from a module numba2cuda does not read (the source defines the others)
        for member, number in desc["members"].items():
            view.constants[f"{name}.{member}"] = number
    elif kind == "module":
        view.aliases.setdefault(name, desc["name"])
    elif kind == "function":
        view.aliases.setdefault(name, desc["qualified"])
    elif kind == "missing":
        view.constants.pop(name, None)
        view.aliases.pop(name, None)
        package = desc["package"]
        where = "a module of its package that is not next to it here" if package.startswith(".") else \
            "which is not installed here"
        view.nonconstant[name] = f"comes from {package}, {where} {STOOD_IN}"
        view.needs_run.discard(name)
    elif kind == "other":
        view.constants.pop(name, None)
        view.nonconstant[name] = (f"is {desc['type']} when the module runs; kernels see numbers, tuples of them, "
                                  "NumPy arrays of numbers, dtypes and other kernels")
        view.needs_run.discard(name)


def apply_globals(info: ModuleInfo, imported) -> None:
    """The module's own globals (numbers, tuples, arrays, dtypes) as the run left them: before the kernels are
    found, so every scope sees them."""
    result, arrays = imported
    for name, desc in result.get("globals", {}).items():
        if desc["kind"] in ("other", "missing") and name not in info.nonconstant:
            continue  # a class, a helper object: only what the source could not tell is told anew
        apply_value(info, name, desc, arrays)
    for package in result.get("stand_ins", []):
        node, direct = _import_of(info, package)
        if package.startswith("."):
            info.notices.append(info.reporter.make(
                node, f"import of {package}", f"the module imports {package} from its package, and no "
                f"{package[1:]}.py is next to it here, so the import mode stood in for it; the kernels do not use "
                "it, or translating them says so"))
            continue
        how = "" if direct else " (a module this one imports needs it)"
        if package in NUMPY_BACKED:
            info.notices.append(info.reporter.make(
                node, f"import of {package}", f"{package} is not installed here, so the import mode stood NumPy in "
                f"for it{how}: its arrays have NumPy's shapes and dtypes, as Numba types {package}'s; what NumPy "
                "lacks is a stand-in"))
            continue
        info.notices.append(info.reporter.make(node, f"import of {package}", f"{package} is not installed here, so "
                                               f"the import mode stood in for it{how}; the kernels do not use it, "
                                               "or translating them says so"))


def _import_of(info: ModuleInfo, package: str):
    """(node, whether it names PACKAGE): the module's statement that imports PACKAGE (at its top, or in a
    function: a test's own `import cffi`), else its first import."""
    first = None
    for small in find_nodes(info.module, lambda n: isinstance(n, (cst.Import, cst.ImportFrom))):
        if isinstance(small, cst.Import):
            names = [cst.Module([]).code_for_node(alias.name) for alias in small.names]
        elif small.module is not None:
            names = ["." * len(small.relative) + cst.Module([]).code_for_node(small.module)]
        else:
            continue
        first = first or small
        if any(n == package or n.split(".")[0] == package for n in names):
            return small, True
    return first or info.module.body[0], False


# ------------------------------------------------------------------ dispatchers -> FunctionInfos

def _find_def(info: ModuleInfo, func: str, line: int):
    """The FunctionDef named FUNC whose decorators or `def` are at LINE (a code object's first line)."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node) -> None:
            if node.name.value != func:
                return
            start = info.reporter.location(node).line
            first = min([start] + [info.reporter.location(d).line for d in node.decorators])
            if first <= line <= info.reporter.location(node.name).line:
                found.append(node)

    info.module.visit(Finder())
    return found[-1] if found else None


def apply_kernels(info: ModuleInfo, imported, make_info, load_file=None, load_text=None) -> None:
    """Each dispatcher the run made becomes a FunctionInfo whose scope holds its free names' values.
    MAKE_INFO(view, node, is_device, key, name) builds one from the source (discover.function_info).
    LOAD_FILE(path): another file's module, read as a sibling is, or None: a device function of that file a
    kernel here calls (a test's module of use cases) is read from it, unless the source already names it (a
    library's function, such as numba.cuda.random's draws). LOAD_TEXT(source, path): a string exec() ran here,
    read as a module named PATH, or None: a kernel a template made (execsource.py) is read from it."""
    result, arrays = imported
    here = os.path.realpath(info.path)
    entries = result.get("kernels", [])
    made: list = [None] * len(entries)
    for index, entry in enumerate(entries):
        if entry["file"] == here:
            made[index] = _function_of(info, info, entry, arrays, made, make_info)
        elif entry.get("exec_file") == here and load_text is not None:
            owner = load_text(entry["exec_source"], exec_path(entry))
            if owner is not None:
                made[index] = _function_of(info, owner, entry, arrays, made, make_info)
    info.imported_keys = [fi.key if fi is not None else None for fi in made]
    lines = info.source.splitlines()
    for name, line, col in set_after_skipped(info.source, result):  # the run with launches failed too
        info.notices.append(Diagnostic(Location(info.path, line, col), f"'{name}'", "is set after a launch the "
                                       "import mode did not run (running the module's launches failed): the value "
                                       "translated was computed without that launch's results",
                                       source_line=lines[line - 1] if line <= len(lines) else ""))
    for entry, fi in zip(entries, list(made)):
        if fi is None:
            continue
        for name, desc in entry["free"].items():
            if desc["kind"] != "kernel":
                continue
            other = entries[desc["id"]] if 0 <= desc["id"] < len(entries) else None
            target = made[desc["id"]] if other is not None else None
            if target is None and other is not None and other["device"] and load_file is not None and \
                    name not in fi.scope.aliases and os.path.isfile(other["file"]):
                owner = load_file(other["file"])
                if owner is not None:
                    target = made[desc["id"]] = _function_of(info, owner, other, arrays, made, make_info)
            if target is not None and not target.is_device:  # a kernel called from a kernel: its device copy
                copy = target.device_copy()
                target = info.functions.setdefault(copy.key, copy)
            if target is not None:
                fi.scope.functions[name] = target
            elif not _read_from(fi.scope.functions.get(name), other) and name not in fi.scope.aliases:
                fi.scope.functions.pop(name, None)
                where = f"'{other['qualname']}', defined in {other['file']}" if other else "a function of another file"
                reason = (f"is {where}, which numba2cuda does not read: it translates the functions of this file "
                          "and of the modules next to it that it imports")
                if other and other["file"].startswith("<"):  # exec() of a string made when the module ran
                    reason = f"is '{other['qualname']}', made by exec() of a string: it has no source for numba2cuda"
                elif other and other["file"] == here:  # read, and refused: `def consumer(func, *args)`
                    reason = (f"is '{other['qualname']}' of this file, which numba2cuda cannot translate as a "
                              "device function" + _why_refused(info, other))
                fi.scope.nonconstant[name] = reason


def _function_of(info: ModuleInfo, owner: ModuleInfo, entry: dict, arrays: list, made: list, make_info):
    """The FunctionInfo of ENTRY, a dispatcher whose source is in OWNER (INFO's module or another file), in a
    scope holding its free names' values; None where its source or its decorator cannot be read."""
    node = _find_def(owner, entry["func"], entry["line"])
    if node is None:
        return None
    # what reading the source knew of it (an enclosing function's imports, captures and declare_device calls) is
    # the base the run's values go on
    base = next((f.scope for f in info.functions.values() if f.node is node and f.scope is not None), owner)
    view = base.view(aliases=dict(base.aliases), constants=dict(base.constants),
                     nonconstant=dict(base.nonconstant), value_nodes=dict(base.value_nodes),
                     needs_run=set(base.needs_run), functions=dict(base.functions),
                     failed_functions=dict(base.failed_functions), plain_functions=dict(base.plain_functions))
    for name, desc in entry["free"].items():
        apply_value(view, name, desc, arrays)
    qualname = entry.get("qualname") or ""
    nested = qualname.replace(".<locals>", "") if ".<locals>." in qualname else entry["name"]
    key = _free_key(info, _static_key(info, node, nested), node, made)
    if owner is not info:  # located in its own file, its constants declared by this module's names
        key = f"{owner.path}:{key}"
        info.reporter.adopt(owner.reporter)
        if owner.module_info is owner:
            owner.root = info
    try:
        fi = make_info(view, node, entry["device"] or entry["cpu"], key, entry["name"], entry.get("recorded"))
        _apply_record(fi, entry)
    except Unsupported as exc:
        info.deferred[key] = [info.reporter.make(exc.node, exc.construct, exc.message, exc.hint)]
        return None
    fi.scope = view
    for old in info.functions.values():  # the statically found function of this source is superseded
        if old.node is node and old.listed and all(old is not m for m in made):
            old.listed = False
    for old_key in [k for k, n in info.deferred_nodes.items() if n is node]:
        info.deferred.pop(old_key, None)  # and so is the problem reading it found
    info.functions[key] = fi
    info.deferred.pop(key, None)
    return fi


def exec_path(entry: dict) -> str:
    """The name a string exec() ran goes by in messages and C comments: where it ran."""
    return f"<exec at {os.path.basename(entry['exec_file'])}:{entry['exec_line']}>"


def _why_refused(info: ModuleInfo, entry: dict) -> str:
    """': ' and the first problem reading the function ENTRY describes found, if it was read."""
    node = _find_def(info, entry["func"], entry["line"])
    for key, problems in info.deferred.items():
        if problems and info.deferred_nodes.get(key) is node:
            return f" ({problems[0].message})"
    return ""


def _read_from(fi: FunctionInfo | None, entry: dict | None) -> bool:
    """Whether FI, found by reading the source, is the function ENTRY describes (a device function of a module
    next to this one, which the static reading already brought in)."""
    return fi is not None and entry is not None and fi.scope is not None and fi.node.name.value == entry["func"] \
        and os.path.realpath(fi.scope.path) == entry["file"]


def _static_key(info: ModuleInfo, node, name: str) -> str:
    """The key reading the source gave the function at NODE (`Class.test.kernel` for one made in a test), so
    --kernel names it the same way with or without the import mode; else NAME (for a function made inside
    another, which the source does not show as a kernel, `Class.helper.kernel` after its qualified name)."""
    last = name.rsplit(".", 1)[-1]
    return next((fi.key for fi in info.functions.values() if fi.node is node and fi.key.endswith(last)), name)


def _free_key(info: ModuleInfo, name: str, node, made: list) -> str:
    """NAME, unless another function has it: the same function's static reading is replaced, but not another
    dispatcher the run made of the same source (a factory called twice)."""
    key, k = name, 1
    while key in info.functions and (info.functions[key].node is not node
                                     or any(info.functions[key] is m for m in made)):
        k += 1
        key = f"{name}_{k}"
    return key


def _apply_record(fi: FunctionInfo, entry: dict) -> None:
    """The signatures and options the run recorded (cuda.jit(sig)(fn) and factories included)."""
    texts = entry["signatures"] or ([entry["launched"]] if entry.get("launched") else [])
    if texts:
        sigs = []
        for text in texts:
            try:
                sigs.append(T.parse_signature(text))
            except T.TypeStringError as exc:
                raise Unsupported(fi.node.name, "signature", f"{exc} (as the module gave it: {text!r})") from None
        for sig in sigs:
            if len(sig[1]) != len(fi.params):
                raise Unsupported(fi.node.name, "signature", f"has {len(sig[1])} argument types for "
                                  f"{len(fi.params)} parameters")
        fi.signatures, fi.signature = sigs, sigs[0]
    for key in ("fastmath", "lineinfo", "inline", "forceinline", "debug"):
        if key in entry["options"]:
            fi.options[key] = entry["options"][key]
    for key in ("launch_bounds", "max_registers"):
        value = entry["options"].get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            fi.options[key] = (value,) if key == "launch_bounds" else value
        elif isinstance(value, list) and all(isinstance(v, int) for v in value) and key == "launch_bounds":
            fi.options[key] = tuple(value)
