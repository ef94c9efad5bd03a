"""The import mode's child side: import a Numba module as Numba's users do, and describe, as plain data, the
kernels it made and the values of their free names.

Runs in a sandboxed child (translator.sandbox.Worker: scrubbed environment, limits, timeout), normally under
the CUDA simulator (NUMBA_ENABLE_CUDASIM=1) so no GPU is needed. Before the module is imported, cuda.jit is
wrapped to record how each kernel was made (its signatures and options, which the simulator forgets); options
the simulator does not take are recorded and dropped, so a module that asks for lineinfo= or launch_bounds=
still imports. Then every dispatcher among the module's globals is described: where its source is (file, line,
function), how it was made, and, for each free name (a global or a closure cell), what it holds: a number, a
tuple, a NumPy array (sent as .npy, never pickled), a dtype, a module or function (by qualified name), another
kernel or device function, a CPU @njit function, or something else (by type name only).

Also used in the parent for a dispatcher the caller already holds (numba2cuda.load(kernel)): describing reads
attributes and closure cells, and runs nothing.
"""

from __future__ import annotations

import enum
import inspect
import os
import sys
import types

from ..userimport import import_path, is_library_path, python3_source
from .entries import plan
from .execsource import ExecSources
from .runentries import Runner, python_function
from .simulator import patch_simulator
from .standins import StandIn, StandInModule, import_with_stand_ins, package_of

MAX_TUPLE = 64
PUBLIC_MODULES = {"_operator": "operator"}


class Describer:
    def __init__(self, max_array_bytes: int):
        self.max_array_bytes = max_array_bytes
        self.arrays: list = []
        self.kernels: list = []  # dispatcher descriptions, in the order they were met
        self.ids: dict = {}  # id(dispatcher or njit function) -> index in kernels
        self.records: dict = {}  # id(dispatcher) -> (signature, options) from the recording cuda.jit
        self.keep: list = []  # the described objects, alive so their ids stay theirs
        self.objects: list = []  # per kernel description: its dispatcher
        self.made: list = []  # every dispatcher the recording cuda.jit made, in order
        self.on_made = None  # (dispatcher, the signatures that compiled it at once) -> None, while entries run
        self.execs = ExecSources()  # the strings exec() ran: the source of a kernel a template made

    # ------------------------------------------------------------ values
    def value(self, v, depth: int = 0) -> dict:
        import numpy as np

        if isinstance(v, (StandIn, StandInModule)):
            return {"kind": "missing", "package": package_of(v)}
        if isinstance(v, bool):
            return {"kind": "number", "value": v, "dtype": "bool"}
        if isinstance(v, int):
            return {"kind": "number", "value": v, "dtype": "int"}
        if isinstance(v, float):
            return {"kind": "number", "value": v, "dtype": "float"}
        if isinstance(v, np.generic) and v.dtype.kind in "biuf":
            return {"kind": "number", "value": v.item(), "dtype": str(v.dtype)}
        if isinstance(v, tuple) and depth < 3 and len(v) <= MAX_TUPLE:
            return {"kind": "tuple", "items": [self.value(x, depth + 1) for x in v]}
        if isinstance(v, np.ndarray):
            if v.dtype.kind not in "biuf" or v.ndim == 0:
                what = f"records {v.dtype}" if v.dtype.names else f"{v.dtype} with 0 dimensions" if v.ndim == 0 \
                    else str(v.dtype)
                return {"kind": "other", "type": f"a NumPy array of {what}"}
            if v.nbytes > self.max_array_bytes:
                return {"kind": "array", "too_big": int(v.nbytes), "dtype": str(v.dtype), "shape": list(v.shape)}
            self.arrays.append(np.ascontiguousarray(v))
            return {"kind": "array", "index": len(self.arrays) - 1}
        dtype = _dtype_name(v)
        if dtype is not None:
            return {"kind": "dtype", "name": dtype}
        record = _record_type(v)
        if record is not None:
            return {"kind": "record", "type": record}
        if _is_cuda_dispatcher(v) or _is_cpu_dispatcher(v):
            return {"kind": "kernel", "id": self.kernel(v, None)}
        if inspect.ismodule(v):
            return {"kind": "module", "name": v.__name__}
        if isinstance(v, type) and issubclass(v, (enum.IntEnum, enum.IntFlag)):
            # Numba reads an integer enum's members as their ints (IntEnumMember): `RequestError.not_found`
            return {"kind": "int_enum", "members": {m: int(x) for m, x in v.__members__.items()}}
        if callable(v) and getattr(v, "__module__", None) and getattr(v, "__qualname__", None):
            module = PUBLIC_MODULES.get(v.__module__, v.__module__)  # operator.add is _operator.add
            return {"kind": "function", "qualified": f"{module}.{v.__qualname__}"}
        if hasattr(v, "__cuda_array_interface__") or type(v).__name__ == "FakeCUDAArray":
            dtype = getattr(v, "dtype", None)
            if getattr(dtype, "kind", "") in ("b", "i", "u", "f") and getattr(v, "ndim", None) is not None:
                # captured by pointer: its shape and type are what a kernel knows of it (made in a loop, of data)
                return {"kind": "device_array", "shape": [int(d) for d in v.shape], "dtype": str(dtype)}
            return {"kind": "read_from_source"}
        if isinstance(v, Declared):
            return {"kind": "read_from_source"}  # the source tells it: a declare_device's function
        return {"kind": "other", "type": f"a {type(v).__name__}"}

    # ------------------------------------------------------------ kernels
    def kernel(self, obj, name) -> int:
        if id(obj) in self.ids:
            index = self.ids[id(obj)]
            if name and not self.kernels[index]["bound"]:
                self.kernels[index]["name"], self.kernels[index]["bound"] = name, True
            return index
        index = len(self.kernels)
        self.ids[id(obj)] = index
        self.objects.append(obj)
        self.keep.append(obj)
        fn = python_function(obj)
        code = fn.__code__
        entry = {"name": name or fn.__name__, "bound": bool(name), "func": code.co_name,
                 "qualname": getattr(fn, "__qualname__", code.co_name), "line": code.co_firstlineno,
                 "file": _source_file(fn, code),
                 "cpu": _is_cpu_dispatcher(obj), "device": bool(getattr(obj, "_device", False)) or bool(
                     getattr(getattr(obj, "targetoptions", {}), "get", lambda k, d=None: d)("device", False)),
                 "signatures": [], "options": {}, "free": {}}
        made_by_exec = self.execs.find(code) if entry["file"].startswith("<") else None
        if made_by_exec is not None:  # a template's kernel: read from the string exec ran
            entry["exec_source"], entry["exec_file"], entry["exec_line"] = made_by_exec
        self.kernels.append(entry)
        record = self.records.get(id(obj))
        entry["recorded"] = record is not None
        if record is not None:
            signature, options = record
            entry["signatures"] = signature_strings(signature)
            entry["options"] = {k: _plain(v) for k, v in options.items() if _plain(v) is not None}
            entry["device"] = entry["device"] or bool(options.get("device"))
        elif not entry["cpu"]:
            entry["signatures"] = signature_strings(list(getattr(obj, "signatures", None) or []) or None)
        self.read_free(index)
        return index

    def read_free(self, index: int, seen=None) -> None:
        """The free names of kernel INDEX as they are now (again at its launch: a script's `__main__` block may
        have set a global it reads since the import), and of the device functions it calls, which read theirs
        when it compiles (an accretion disk's device functions read dr and dtheta the main block computes)."""
        seen = set() if seen is None else seen
        seen.add(index)
        entry, obj = self.kernels[index], self.objects[index]
        fn = python_function(obj)
        code = fn.__code__
        cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
        names = {n for c in _codes(code) for n in c.co_names} | set(code.co_freevars)
        for free in sorted(names):
            if free in cells:
                try:
                    value = cells[free].cell_contents
                except ValueError:  # a cell not yet filled when the kernel was made
                    entry["free"][free] = {"kind": "other", "type": "an unassigned closure variable"}
                    continue
            elif free in fn.__globals__:
                value = fn.__globals__[free]
            else:
                continue  # a builtin, or an attribute name
            entry["free"][free] = self.value(value)
            callee = entry["free"][free]
            if callee["kind"] == "kernel" and callee["id"] not in seen:
                self.read_free(callee["id"], seen)


def _source_file(fn, code) -> str:
    """The real path of FN's source file, or its code's own name where it has none (`<string>` of an exec)."""
    if code.co_filename.startswith("<"):
        return code.co_filename
    return os.path.realpath(inspect.getsourcefile(fn) or code.co_filename)


def _plain(v):
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (tuple, list)) and all(isinstance(x, (bool, int, float, str)) for x in v):
        return list(v)
    return None


def _record_type(v):
    """Numba's spelling of a structured dtype, or of Numba's type of one (numba.from_dtype), else None."""
    numba = sys.modules.get("numba")
    if numba is None:
        return None
    import numpy as np

    if isinstance(v, np.dtype) and v.names is not None:
        try:
            return str(numba.from_dtype(v))
        except Exception:  # noqa: BLE001 - a dtype Numba cannot type (objects, strings): not a record kernels use
            return None
    return str(v) if isinstance(v, numba.core.types.Record) else None


def _dtype_name(v):
    import numpy as np

    try:
        if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
            dtype = np.dtype(v)
            return dtype.name if dtype.kind in "biuf" else None
    except TypeError:
        return None
    numba = sys.modules.get("numba")
    if numba is not None:
        types = numba.core.types
        if isinstance(v, (types.Integer, types.Float, types.Boolean)):
            return "bool" if isinstance(v, types.Boolean) else str(v)
    return None


def _is_cuda_dispatcher(v) -> bool:
    kind = type(v).__module__ + "." + type(v).__name__
    return kind.endswith(("FakeCUDAKernel", "CUDADispatcher")) and (hasattr(v, "py_func") or hasattr(v, "fn"))


def _is_cpu_dispatcher(v) -> bool:
    kind = type(v).__name__
    return kind == "CPUDispatcher" and hasattr(v, "py_func")


def type_string(t) -> str:
    """A Numba type as numba2cuda's type strings spell it: array(float32, 2d, C) -> float32[:, ::1]."""
    from numba.core import types

    if isinstance(t, str):
        return t
    if isinstance(t, types.Array):
        if t.ndim == 0:
            return f"{type_string(t.dtype)}[()]"
        dims = [":"] * t.ndim
        if t.layout == "C" and t.ndim:
            dims[-1] = "::1"
        elif t.layout == "F" and t.ndim:  # a transpose, np.asfortranarray: column-major, as Numba compiles it
            dims[0] = "::1"
        return f"{type_string(t.dtype)}[{', '.join(dims)}]"
    if isinstance(t, types.BaseNamedTuple):  # its fields' names too, which the kernel reads (x.r)
        fields = t.instance_class._fields
        return "NamedTuple(" + ", ".join(f"{n}={type_string(x)}" for n, x in zip(fields, t.types)) + ")"
    if isinstance(t, types.CPointer):  # str() gives `float32*`, which no signature string spells
        return f"CPointer({type_string(t.dtype)})"
    if isinstance(t, types.UniTuple):
        return f"UniTuple({type_string(t.dtype)}, {t.count})"
    if isinstance(t, types.BaseTuple):  # Tuple's one argument is a tuple of types, as a signature spells it
        return "Tuple((" + ", ".join(type_string(x) for x in t.types) + ("," if len(t.types) == 1 else "") + "))"
    if isinstance(t, types.NoneType) or t == types.none:
        return "void"
    if isinstance(t, types.Record) and list(t.fields) == ["s0", "s1"]:  # create_xoroshiro128p_states' record
        return "xoroshiro128p_type"
    return str(t)


def signature_strings(signature) -> list:
    """The signatures a cuda.jit was given (a string, a Signature, a tuple of types, or a list of these)."""
    if signature is None:
        return []
    if isinstance(signature, list):
        return [s for item in signature for s in signature_strings(item)]
    if isinstance(signature, str):
        return [signature]
    if isinstance(signature, tuple):
        return ["(" + ", ".join(type_string(t) for t in signature) + ")"]
    args = getattr(signature, "args", None)
    if args is not None:
        ret = getattr(signature, "return_type", None)
        return [(type_string(ret) if ret is not None else "") + "(" + ", ".join(type_string(t) for t in args) + ")"]
    return []


# ------------------------------------------------------------------ the child's entry

def _record_jit(describer: Describer, simulator: bool):
    """Wrap numba.cuda.jit so each dispatcher it makes is recorded with its signature and options."""
    from numba import cuda

    real = cuda.jit
    accepted = set(inspect.signature(real).parameters)

    def jit(func_or_sig=None, **options):
        given = {k: v for k, v in options.items() if k in accepted or not simulator}
        if simulator:
            given.pop("link", None)
        if callable(func_or_sig) and not isinstance(func_or_sig, (str, list, tuple)) and \
                not _looks_like_signature(func_or_sig):
            made = real(func_or_sig, **given)
            describer.records[id(made)] = (None, options)
            _made(describer, made, None)
            return made
        decorator = real(func_or_sig, **given)

        def apply(fn):
            made = decorator(fn)
            signature = func_or_sig if func_or_sig is not None else options.get("argtypes")
            describer.records[id(made)] = (signature, options)
            _made(describer, made, signature)
            return made
        return apply

    cuda.jit = jit
    if simulator:
        cuda.declare_device = Declared
        if not hasattr(cuda, "managed_array"):  # the simulator has no managed memory; its mapped arrays serve
            def managed_array(shape, dtype=float, strides=None, order="C", stream=0, attach_global=True):
                return cuda.mapped_array(shape, dtype=dtype, strides=strides, order=order, stream=stream)
            cuda.managed_array = managed_array
    return real


class Declared:
    """What cuda.declare_device gives under the simulator, which gives None: a foreign function, read from the
    source (frontend/ffi.py) as without the import mode."""

    def __init__(self, *args, **kwargs):
        self.args = args


def _made(describer: Describer, made, signature) -> None:
    describer.keep.append(made)
    describer.made.append(made)
    if describer.on_made is not None:
        describer.on_made(made, signature_strings(signature))


def _looks_like_signature(v) -> bool:
    return type(v).__name__ in ("Signature",) or type(v).__module__.startswith("numba.core.types")


def _import(path: str):
    """Import PATH as Python would for `import name` from its directory (inside its package if it has one)."""
    return import_path(path)


def probe_module(args: dict, arrays: list):
    """(description, arrays) of the module at args["path"]: its kernels and the values of their free names."""
    path = os.path.realpath(args["path"])
    describer = Describer(int(args["max_array_bytes"]))
    simulator = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
    _record_jit(describer, simulator)
    describer.execs.install(path)
    if simulator:
        patch_simulator()
    os.chdir(os.path.dirname(path))
    sys.argv = [path]  # what the module sees of its command line: none, as `python -c "import module"` gives
    runner = _runner(describer, path, args)
    if runner is not None:  # a script that launches at its top level: each kernel seen at its first launch
        runner.install()
        runner.importing = True
        runner.run_launches = bool(args.get("run_launches"))
    try:
        module, stand_ins = import_with_stand_ins(lambda: _import(path), path)
    except Exception as exc:  # noqa: BLE001 - the user's module failed: where, and why, as data
        line = 0
        tb = exc.__traceback__
        while tb is not None:  # the deepest frame of the module's own file: the statement that failed
            if os.path.realpath(tb.tb_frame.f_code.co_filename) == path:
                line = tb.tb_lineno
            tb = tb.tb_next
        if isinstance(exc, SyntaxError) and os.path.realpath(exc.filename or "") == path:
            line = exc.lineno or line
        return {"import_error": {"kind": type(exc).__name__, "message": str(exc).splitlines()[0] if str(exc) else "",
                                 "line": line}, "skipped_launches": runner.skipped if runner else []}, []
    finally:
        if runner is not None:
            runner.importing = False
    for name, value in list(vars(module).items()):
        if _is_cuda_dispatcher(value):
            describer.kernel(value, name)
    module_values = {}
    for name, value in vars(module).items():
        if name.startswith("__"):
            continue
        described = describer.value(value)
        if described["kind"] in ("number", "tuple", "array", "dtype", "other", "missing"):
            module_values[name] = described
    module_values.update(_project_module_values(describer, module, os.path.dirname(path)))
    runs = _run_entries(describer, runner, module, args) if args.get("run", True) and runner is not None else []
    return {"kernels": describer.kernels, "globals": module_values, "simulator": simulator,
            "stand_ins": stand_ins, "runs": runs, "skipped_launches": runner.skipped if runner else [],
            "untyped_launches": runner.untyped if runner else []}, describer.arrays


def _project_module_values(describer: Describer, module, folder: str) -> dict:
    """`geom.LIMITS` of `from . import geom` (a detector simulation's borders, computed when geom runs): the
    values kernels read as attributes of the project's own modules (files under FOLDER's package root), as
    Numba reads them when it compiles; keyed by the dotted name the module uses."""
    root = folder
    while os.path.isfile(os.path.join(root, "__init__.py")) and os.path.dirname(root) != root:
        root = os.path.dirname(root)
    read = {n for obj in describer.objects for c in _codes(python_function(obj).__code__) for n in c.co_names}
    out = {}
    for name, value in vars(module).items():
        if not isinstance(value, types.ModuleType):  # only modules: `mock.call.__file__` is another mock call
            continue
        file = getattr(value, "__file__", None)
        where = os.path.realpath(file if isinstance(file, str) else "/")
        # the project's: under its package root, or on the PYTHONPATH its programs run with (PyGenAlg's
        # GenAlgCfg), anywhere but an installed library
        if not (where.startswith(root + os.sep) or (where != "/" and not is_library_path(where))):
            continue
        for attr in sorted(read & set(vars(value))):
            described = describer.value(getattr(value, attr))
            if described["kind"] in ("number", "tuple", "array", "dtype"):
                out[f"{name}.{attr}"] = described
    return out


def _runner(describer: Describer, path: str, args: dict):
    """The Runner that sees the launches of the module at PATH's kernels (runentries.py), each described at its
    first launch; None where its source cannot be read."""
    import numba

    try:
        with open(path, encoding="utf-8") as f:
            source = python3_source(f.read())[0]  # as the module was imported (userimport)
    except (OSError, UnicodeDecodeError):
        return None

    def describe(dispatcher, launched, entry, name=None):
        known = id(dispatcher) in describer.ids
        index = describer.kernel(dispatcher, name)
        if known:  # described when the module was imported: its free names as they are now
            describer.read_free(index)
        kernel = describer.kernels[index]
        if launched:
            kernel["launched"] = launched
        kernel["run"] = entry

    def type_of(arg):
        if type(arg).__name__ in ("In", "Out", "InOut"):  # cuda.In(a): the array it hints
            arg = arg.value
        return type_string(numba.typeof(getattr(arg, "_ary", arg)))  # the simulator's device array: its host copy

    found = plan(source, tuple(args.get("kernels") or ()))
    return Runner(None, path, source, found, describe, type_of, args.get("want"))


def _run_entries(describer: Describer, runner: Runner, module, args: dict) -> list:
    """Run the tests, main() and __main__ block that reach kernels the import left unfinished (runentries.py),
    describing each such kernel at its first launch: what ran, and how each run ended."""
    if not runner.plan.entries:
        return []
    runner.module = module
    for made in describer.made:  # made when the module was imported, with a signature or --types, and reading
        key = runner.target(made)  # only names the import defined: nothing to wait for
        if key is not None and (describer.records.get(id(made), (None,))[0] is not None or args.get("want")) \
                and not _undefined_globals(made):
            runner.pending.discard(key)
    describer.on_made = runner.made
    try:
        log = runner.run()
    finally:
        describer.on_made = None
    for made in reversed(describer.made):  # made and never launched (a factory's kernel no test launches)
        key = runner.target(made)
        if key is not None:
            runner.describe(made, None, "made when the module ran")
            runner.pending.discard(key)
    return log


def _codes(code) -> list:
    """CODE and the code nested in it (a generator expression's), whose names the function reads too."""
    return [code] + [c for c in code.co_consts if inspect.iscode(c)]


def _undefined_globals(dispatcher, seen=None) -> bool:
    """Whether DISPATCHER's function, or a device function it calls, reads a global its module does not define
    yet (one a script's `__main__` block sets, such as a dtype chosen there)."""
    import builtins
    import dis

    seen = set() if seen is None else seen
    seen.add(id(dispatcher))
    fn = python_function(dispatcher)
    code = getattr(fn, "__code__", None)
    read = {i.argval for c in (_codes(code) if code is not None else ()) for i in dis.get_instructions(c)
            if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    if any(name not in fn.__globals__ and not hasattr(builtins, name) for name in read):
        return True
    callees = [fn.__globals__[n] for n in read if _is_cuda_dispatcher(fn.__globals__.get(n))]
    return any(_undefined_globals(c, seen) for c in callees if id(c) not in seen)


def describe_dispatcher(obj, max_array_bytes: int):
    """(description, arrays) of one dispatcher the caller holds, read in this process without running anything."""
    describer = Describer(max_array_bytes)
    fn = python_function(obj)
    bound = next((name for name, value in getattr(fn, "__globals__", {}).items() if value is obj), None)
    describer.kernel(obj, bound)
    return {"kernels": describer.kernels, "globals": {}, "simulator": None}, describer.arrays
