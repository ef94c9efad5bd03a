"""launch configuration + arguments -> the values to launch with, or the exception Numba's dispatcher gives for the
same mistake, raised before anything reaches the driver.

Shared by the drop-in launcher (launch.py: numba2cuda.load and packaged projects, where this file is copied
verbatim beside it) and the CPU runtime (cpu_launch.py). Standard library only (no torch, NumPy, Numba or
numba2cuda), so both carry it as it is; NumPy arrays and scalars are recognised by their attributes.

Exception types follow Numba: a malformed launch tuple or a dimension of the wrong kind is a TypeError or
ValueError as in numba.cuda.errors.normalize_kernel_dimensions, an argument of the wrong type a TypeError (Numba:
"No matching definition for argument type(s) ..."), an integer outside its parameter's C type an OverflowError,
a value outside the device's limits or the kernel's own rules a ValueError. Each message names the kernel, the
launch field or parameter, what was expected and what was given.
"""

import numbers
import operator
from collections import namedtuple

# --------------------------------------------------------------------------- device limits

#: Limits every CUDA GPU since compute capability 3.0 shares (CUDA C++ Programming Guide, "Technical
#: Specifications per Compute Capability"): threads per block, block and grid extents per axis.
MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK = (1024, 1024, 64)
MAX_GRID = (2**31 - 1, 65535, 65535)

#: Shared memory one block may use without opting in (static + dynamic), on every GPU.
DEFAULT_SHARED = 48 * 1024

#: The opt-in maximum of shared memory per block (cudaDevAttrMaxSharedMemoryPerBlockOptin), in bytes, per
#: compute capability (same table of the Programming Guide). Used only when there is no GPU to ask: checks on
#: a machine without one, the CPU runtime, tests; with a GPU the device's own answer replaces it.
SHARED_OPTIN = {
    (5, 0): 49152, (5, 2): 49152, (5, 3): 49152, (6, 0): 49152, (6, 1): 49152, (6, 2): 49152,
    (7, 0): 98304, (7, 2): 98304, (7, 5): 65536,
    (8, 0): 166912, (8, 6): 101376, (8, 7): 166912, (8, 9): 101376,
    (9, 0): 232448, (10, 0): 232448, (10, 3): 232448, (11, 0): 232448, (12, 0): 101376, (12, 1): 101376,
}

#: The architecture assumed without a GPU: numba2cuda's default build target (sm_90, the H100/H200).
DEFAULT_CC = (9, 0)

Limits = namedtuple("Limits", "device max_threads max_block max_grid shared_optin")


def table_limits(cc=DEFAULT_CC, name=None) -> Limits:
    """The limits of a compute capability from the tables above (the newest known minor of its major for an
    unknown one, 48 KiB of shared memory for an unknown major)."""
    cc = tuple(cc)
    optin = SHARED_OPTIN.get(cc)
    if optin is None:
        same_major = [k for k in SHARED_OPTIN if k[0] == cc[0] and k <= cc]
        optin = SHARED_OPTIN[max(same_major)] if same_major else DEFAULT_SHARED
    label = f"sm_{cc[0]}{cc[1]}"
    device = f"{name} ({label})" if name else f"{label} (limits from numba2cuda's table)"
    return Limits(device, MAX_THREADS_PER_BLOCK, MAX_BLOCK, MAX_GRID, optin)


# --------------------------------------------------------------------------- the launch tuple

CURRENT_STREAM = -1  # the binding reads torch's current stream


def _integer(v) -> bool:
    return type(v) is int or isinstance(v, numbers.Integral)  # the ABC check is slow: plain ints skip it


def _dims(value, what, kernel, maximum) -> tuple:
    dims = value if type(value) is tuple else tuple(value) if isinstance(value, list) else (value,)
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"{kernel}: {what} must be a sequence of 1, 2 or 3 integers, got {value!r}")
    for d in dims:
        if type(d) is not int and not isinstance(d, numbers.Integral):
            raise TypeError(f"{kernel}: {what} must be a sequence of integers, got {value!r}")
    dims = tuple(map(operator.index, dims)) + (1, 1, 1)[len(dims):]
    x, y, z = dims
    if not (1 <= x <= maximum[0] and 1 <= y <= maximum[1] and 1 <= z <= maximum[2]):
        for axis, d, top in zip("xyz", dims, maximum):
            if not 1 <= d <= top:
                raise ValueError(f"{kernel}: {what}.{axis} must be between 1 and {top}, got {d} (in {what} {value!r})")
    return dims


def stream_handle(stream, kernel="kernel"):
    """A raw cudaStream_t from a torch, CuPy or Numba stream, or an int; 0 is the default stream as in Numba."""
    if stream is None:
        return CURRENT_STREAM
    if _integer(stream):
        return operator.index(stream)
    for attr in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    handle = getattr(stream, "handle", None)  # numba.cuda.cudadrv.driver.Stream
    if handle is not None:
        return int(getattr(handle, "value", handle) or 0)
    raise TypeError(f"{kernel}: stream must be a CUDA stream (torch.cuda.Stream, a CuPy or Numba stream), an int "
                    f"handle or None, got {type(stream).__name__} {stream!r}")


def launch_config(kernel, config, limits: Limits, static_shared=0) -> tuple:
    """kernel[grid, block, stream, shared_bytes] -> (gx, gy, gz, bx, by, bz, stream handle, shared bytes), each
    field within the device's limits; static_shared: the kernel's own __shared__ bytes, which the opt-in
    maximum also covers."""
    if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
        raise ValueError(f"{kernel}: must specify at least the griddim and blockdim: launch as {kernel}[grid, block], "
                         f"[grid, block, stream] or [grid, block, stream, shared_bytes], got {kernel}[{config!r}]")
    grid = _dims(config[0], "griddim", kernel, limits.max_grid)
    block = _dims(config[1], "blockdim", kernel, limits.max_block)
    threads = block[0] * block[1] * block[2]
    if threads > limits.max_threads:
        raise ValueError(f"{kernel}: blockdim {config[1]!r} is {threads} threads, more than the "
                         f"{limits.max_threads} a block may have on {limits.device}")
    stream = stream_handle(config[2], kernel) if len(config) >= 3 else CURRENT_STREAM
    shared = config[3] if len(config) == 4 else 0
    if not _integer(shared):
        raise TypeError(f"{kernel}: sharedmem (dynamic shared memory) must be an integer number of bytes, "
                        f"got {type(shared).__name__} {shared!r}")
    shared = operator.index(shared)
    if shared < 0:
        raise ValueError(f"{kernel}: sharedmem (dynamic shared memory) must be >= 0 bytes, got {shared}")
    if shared + static_shared > limits.shared_optin:
        static = f" + {static_shared} static" if static_shared else ""
        raise ValueError(f"{kernel}: sharedmem {shared} bytes of dynamic shared memory{static} exceed the "
                         f"{limits.shared_optin} bytes a block may have on {limits.device}")
    return grid + block + (stream, shared)


# --------------------------------------------------------------------------- parameters

INT_RANGES = {f"{k}{b}": ((-(1 << (b - 1)), (1 << (b - 1)) - 1) if k == "int" else (0, (1 << b) - 1))
              for k in ("int", "uint") for b in (8, 16, 32, 64)}
RULE_OPS = {"> 0": lambda v: v > 0, ">= 0": lambda v: v >= 0, "!= 0": lambda v: v != 0}


class Param:
    """One kernel parameter, from the (name, type, written, rule) a kernel's metadata lists: type as Numba's
    signature spells it ("float32[:, ::1]", "int64"), rule "" or "> 0: why" (also ">= 0", "!= 0")."""

    __slots__ = ("name", "type", "written", "rule", "why", "is_array", "dtype", "ndim", "kind", "items", "order")

    def __init__(self, name, type_text, written=False, rule=""):
        self.name, self.type, self.written = name, type_text, bool(written)
        self.rule, _, self.why = (part.strip() for part in rule.partition(":"))
        self.items = ()
        self.order = "C"  # an array's element order: "F" where the type says column-major (float32[::1, :])
        if type_text.startswith(("Tuple(", "NamedTuple(")):  # a tuple of numbers ("Tuple(int64, int64)", a
            # namedtuple's "NamedTuple(x=int64, r=float64)"): the binding takes its items
            self.is_array, self.dtype, self.ndim, self.kind = False, type_text, 0, "tuple"
            item_rules = dict(part.split("] ", 1) for part in rule[1:].split(" | [")) if rule else {}  # "[1] >= 0: ..."
            parts = _top_level_items(type_text[type_text.index("(") + 1:-1])  # "Tuple(Tuple(), Tuple(int64, ...))"
            items, offset = [], 0  # the rules are per leaf ("[3] > 0: ..." of an inner tuple's item too)
            for k, t in enumerate(parts):
                t = t.rpartition("=")[2].strip() if "(" not in t.partition("=")[0] else t  # a NamedTuple's x=int64
                n = len(Param(name, t).leaves())  # how many of the binding's arguments the item is
                own = " | ".join(f"[{int(j) - offset}] {r}" for j, r in item_rules.items() if offset <= int(j) < offset + n)
                items.append(Param(f"{name}[{k}]", t, rule=own if t.startswith(("Tuple(", "NamedTuple(")) else
                                   item_rules.get(str(offset), "")))
                offset += n
            self.items = tuple(items)
            self.rule = self.why = ""
        elif type_text in ("complex64", "complex128"):  # the binding takes its real and imaginary parts
            self.is_array, self.dtype, self.ndim, self.kind = False, type_text, 0, "complex"
            part = "float32" if type_text == "complex64" else "float64"
            self.items = (Param(f"{name}.real", part), Param(f"{name}.imag", part))
        elif "[" in type_text:
            self.is_array = True
            self.dtype = type_text.split("[", 1)[0].strip()
            if type_text.startswith("Record("):  # a record's own spelling has brackets: its array's come after it
                self.dtype = type_text[:_closing(type_text) + 1]
                type_text = "r" + type_text[len(self.dtype):]
            self.ndim = 0 if type_text.endswith("[()]") else type_text.count(",") + 1
            self.kind = "array"
            if self.ndim > 1 and type_text.split("[", 1)[1].replace(" ", "").startswith("::1,"):
                self.order = "F"
        else:
            self.is_array, self.dtype, self.ndim = False, type_text, 0
            self.kind = "bool" if type_text == "bool" else "float" if type_text.startswith("float") else "int"

    @property
    def spread(self) -> bool:
        """Whether the binding takes this parameter as its leaves, one argument each (a tuple, a complex number)."""
        return self.kind in ("tuple", "complex")

    def leaves(self) -> list:
        """The parameters the binding takes for this one: a tuple's numbers (its inner tuples' too), in order."""
        return [leaf for item in self.items for leaf in item.leaves()] if self.spread else [self]

    @property
    def expected(self) -> str:
        """The array type the translation takes, as Numba writes it: contiguous, in the order it indexes."""
        return numba_array(self.dtype, self.ndim, self.order)

    def contiguous(self, c_contiguous: bool, f_contiguous: bool) -> bool:
        """Whether an array whose flags are these lies in memory as this parameter indexes it."""
        return f_contiguous if self.order == "F" else c_contiguous

    def copy_hint(self, array_module: str = "np") -> str:
        """How to make an array of this parameter's order."""
        return f"{array_module}.{'asfortranarray' if self.order == 'F' else 'ascontiguousarray'}({self.name})"


def _closing(text) -> int:
    """Where the parenthesis TEXT opens with closes."""
    depth = 0
    for i, ch in enumerate(text):
        depth += 1 if ch == "(" else -1 if ch == ")" else 0
        if ch == ")" and depth == 0:
            return i
    return len(text) - 1


def numba_array(dtype, ndim, layout) -> str:
    return f"array({dtype}, {ndim}d, {layout})"


def _is_numpy_bool(v) -> bool:
    return type(v).__module__ == "numpy" and type(v).__name__ in ("bool", "bool_")


def describe(v) -> str:
    """A value as an error message shows it."""
    text = repr(v)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(v).__name__} {text}"


def _top_level_items(text: str) -> list:
    """'int64, Tuple(int64, float32)' -> its items at the top level (none for '')."""
    parts, depth, start = [], 0, 0
    for k, c in enumerate(text):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(text[start:k])
            start = k + 1
    parts.append(text[start:])
    return [t.strip() for t in parts if t.strip()]


def flat(p: Param, value) -> list:
    """A converted argument as the binding takes it: a tuple's (or complex number's) leaves, else the value."""
    if not p.spread:
        return [value]
    return [x for item, v in zip(p.items, value) for x in flat(item, v)]


def scalar(kernel, p: Param, v):
    """The Python value a scalar parameter gets, or the error: ints for integer parameters (bool and NumPy integers
    too, as Numba converts them; never a float, which would be truncated), within the C type's range (else
    OverflowError) and the kernel's rule; any real number for a float parameter; bool, NumPy bool or an integer
    (nonzero is True, Numba's int -> boolean cast) for a bool parameter; for a tuple parameter a tuple of as many
    items, each converted so (Numba takes a tuple, never a list: a list is another type to it); for a complex
    parameter any number, as its (real, imaginary) parts."""
    if p.kind == "tuple":
        if not isinstance(v, tuple) or len(v) != len(p.items):
            raise TypeError(f"{kernel}(): argument '{p.name}' must be a tuple of {len(p.items)} numbers ({p.type}), "
                            f"got {describe(v)}")
        return tuple(scalar(kernel, item, x) for item, x in zip(p.items, v))
    if p.kind == "complex":  # any number, as Numba converts it; its parts, as the binding takes them
        if isinstance(v, numbers.Number) and not isinstance(v, bool) or _is_numpy_bool(v):
            v = complex(v)
            return float(v.real), float(v.imag)
        raise TypeError(f"{kernel}(): argument '{p.name}' must be a number ({p.type}), got {describe(v)}")
    if p.kind == "float":
        if isinstance(v, numbers.Real) or _is_numpy_bool(v):
            try:
                return float(v)
            except OverflowError:
                raise OverflowError(f"{kernel}(): argument '{p.name}' is {p.type}, got {v}, too large for a "
                                    "float") from None
        raise TypeError(f"{kernel}(): argument '{p.name}' must be a real number ({p.type}), got {describe(v)}")
    if p.kind == "bool":
        if isinstance(v, numbers.Integral) or _is_numpy_bool(v):
            return bool(v)
        raise TypeError(f"{kernel}(): argument '{p.name}' must be a bool, got {describe(v)}")
    if _is_numpy_bool(v):
        v = bool(v)
    if not isinstance(v, numbers.Integral):
        hint = f"; pass int({p.name}) if truncating it is meant" if isinstance(v, numbers.Real) else ""
        raise TypeError(f"{kernel}(): argument '{p.name}' must be an integer ({p.type}), got {describe(v)}"
                        f" (numba2cuda never truncates a float to an integer parameter){hint}")
    v = operator.index(v)
    lo, hi = INT_RANGES[p.type]
    if not lo <= v <= hi:
        raise OverflowError(f"{kernel}(): argument '{p.name}' is {p.type}, which holds {lo} to {hi}; got {v}")
    if p.rule and not RULE_OPS[p.rule](v):
        raise ValueError(f"{kernel}(): argument '{p.name}' must be {p.rule} ({p.why}), got {v}")
    return v


def check_array(kernel, p: Param, dtype, ndim, contiguous, what, hint=""):
    """An array's dtype name, ndim and layout against the parameter; contiguous: whether it lies in the parameter's
    order (Param.contiguous); what: "a tensor", "a NumPy array", ...; hint: how to make a copy in that order."""
    layout = p.order if contiguous else "A"
    if _layout_of(dtype) != _layout_of(p.dtype) or ndim != p.ndim:
        raise TypeError(f"{kernel}(): argument '{p.name}' must be {p.expected}, got {numba_array(dtype, ndim, layout)} "
                        f"({what})")
    if not contiguous:
        why = "F-contiguous: numba2cuda indexes it column-major, as its type says" if p.order == "F" else \
            "C-contiguous: numba2cuda indexes row-major"
        raise TypeError(f"{kernel}(): argument '{p.name}' must be {p.expected}, got {numba_array(dtype, ndim, 'A')} "
                        f"({what}, not {why}){hint}")


def memory_order(a) -> str:
    """"F" for an array laid out column-major only (a transpose, np.asfortranarray), else "C": the order a kernel
    typed for it indexes, which a copy of it keeps."""
    return "F" if a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous else "C"


def numpy_dtype_name(dtype) -> str:
    """A NumPy dtype as the parameter types spell it ('float32', 'bool'; a structured dtype as Numba's record
    type); byte-swapped ones keep their '>'."""
    if dtype.names is not None:
        return record_spelling(dtype)
    name = dtype.name if dtype.isnative else dtype.str
    return "bool" if name == "bool_" else name


def check_numpy(kernel, p: Param, a):
    """A NumPy array argument (copied to the device and, if the kernel writes it, back, as Numba does)."""
    check_array(kernel, p, numpy_dtype_name(a.dtype), a.ndim, p.contiguous(a.flags.c_contiguous, a.flags.f_contiguous),
                "a NumPy array", f"; pass {p.copy_hint()}")
    if p.written and not a.flags.writeable:
        raise TypeError(f"{kernel}(): argument '{p.name}' is written by the kernel, but the NumPy array passed is "
                        f"read-only; pass a writable copy ({p.name}.copy())")


def not_an_array(kernel, p: Param, v, accepted):
    return TypeError(f"{kernel}(): argument '{p.name}' must be {p.expected} ({accepted}), got {describe(v)}")


def arity(kernel, nparams, args):
    if len(args) != nparams:
        raise TypeError(f"{kernel}() takes {nparams} arguments ({len(args)} given)")


# --------------------------------------------------------------------------- after the launch

class LaunchError(RuntimeError):
    """The launch reached CUDA and CUDA refused it (cudaLaunchKernel's result, then cudaGetLastError)."""


class KernelFaultError(LaunchError):
    """A kernel faulted on the device (an illegal address, a trap); CUDA reports it at the next call or
    synchronisation, and the context is unusable afterwards."""


# cudaError_t values after which every call fails (the context is lost): a kernel faulted.
STICKY_ERRORS = {700, 702, 709, 710, 714, 715, 716, 717, 718, 719}


def config_text(kernel, config) -> str:
    gx, gy, gz, bx, by, bz, _, shared = config
    return f"{kernel}[({gx}, {gy}, {gz}), ({bx}, {by}, {bz}), stream, {shared}]"


def launch_error(kernel, config, code, name, text, last=None) -> LaunchError:
    """The exception for a CUDA error a launch returned; last: the launch before it (a config_text), which a
    fault reported now most likely comes from."""
    if code in STICKY_ERRORS:
        culprit = (f"the last kernel numba2cuda launched before it was {last}" if last else
                   "no numba2cuda kernel ran before it")
        return KernelFaultError(
            f"{config_text(kernel, config)} could not launch: {name}: {text}. An earlier kernel faulted and CUDA "
            f"reports it now ({culprit}; run with CUDA_LAUNCH_BLOCKING=1 to stop at the faulting launch); the CUDA "
            "context is unusable from here on: restart the process")
    return LaunchError(f"{config_text(kernel, config)} failed to launch: {name}: {text}")


def fault_error(kernel_text, cause) -> KernelFaultError:
    """The exception for a fault CUDA reported at a synchronisation after kernel_text, the last launch."""
    first = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
    return KernelFaultError(f"{kernel_text} faulted on the device: {first} (the last kernel numba2cuda launched; CUDA "
                            "reports a kernel's fault at the next synchronisation, and the CUDA context is unusable "
                            "from here on: restart the process)")


def _layout_of(dtype_name: str) -> str:
    """A dtype's name without a record's aligned flag: NumPy forgets align=True when it copies a dtype through
    .npy or pickling, and the offsets and size already say the layout the kernel reads."""
    return dtype_name.rsplit(";", 1)[0] if dtype_name.startswith("Record(") else dtype_name


def record_spelling(dtype) -> str:
    """A structured dtype as Numba spells its record type (numba.from_dtype): each field's type and offset, the
    itemsize and whether it is aligned, so that two dtypes match exactly when their layouts do."""
    fields = []
    for name in dtype.names:
        sub, offset = dtype.fields[name][:2]
        if sub.names is not None:
            kind = record_spelling(sub)
        elif sub.shape:
            kind = f"nestedarray({numpy_dtype_name(sub.base)}, {sub.shape!r})"
        else:
            kind = numpy_dtype_name(sub)
        fields.append(f"{name}[type={kind};offset={offset}]")
    return f"Record({','.join(fields)};{dtype.itemsize};{bool(dtype.isalignedstruct)})"


def held_record(a):
    """A record scalar (np.void, np.record: an element of a structured array, which Numba passes by reference) as
    the 0-d array a kernel takes, or None for any other value; write_back() copies the kernel's writes into it, as
    Numba copies a record argument back after the launch."""
    if type(a).__module__ == "numpy" and type(a).__name__ in ("void", "record") and a.dtype.names is not None:
        import numpy as np  # passed a NumPy record: NumPy is there

        return np.array(a, dtype=a.dtype)
    return None


def write_back(record, held) -> None:
    for name in record.dtype.names:
        record[name] = held[name]
