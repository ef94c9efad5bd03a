"""launch configuration, streams and argument conversion -> one checked call of a translated kernel's binding.

The one copy of this logic: numba2cuda.load() uses it, and `numba2cuda package` writes this file verbatim into
the generated project as `_launch.py`, beside launch_checks.py. So it imports only torch (and NumPy when a NumPy
array is passed), never numba2cuda, Numba or libcst.

Every launch is checked before anything reaches the driver: the launch tuple against the device's limits when
kernel[...] is configured (cached per configuration), the arguments by the binding (C++, a few nanoseconds), which
returns what it refused instead of throwing; the message and the exception type come from launch_checks.py.
"""

import torch

from . import launch_checks as checks

CURRENT_STREAM, KernelFaultError, LaunchError = checks.CURRENT_STREAM, checks.KernelFaultError, checks.LaunchError
stream_handle = checks.stream_handle

__all__ = ["CURRENT_STREAM", "Kernel", "KernelFaultError", "Launch", "LaunchError", "device_limits", "stream_handle",
           "synchronize"]

_LIMITS = {}  # device index (None without a GPU) -> Limits, asked once per device
_device_count = None  # GPUs torch sees, asked once
_last_launch = None  # the Launch that ran last: a fault CUDA reports later is most likely its


def device_limits():
    """The current device's limits (asked once per device), or numba2cuda's table when there is no GPU."""
    global _device_count
    if _device_count is None:
        _device_count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    index = None if _device_count == 0 else 0 if _device_count == 1 else torch.cuda.current_device()
    limits = _LIMITS.get(index)
    if limits is None:
        if index is None:
            limits = checks.table_limits()
        else:
            props = torch.cuda.get_device_properties(index)
            table = checks.table_limits((props.major, props.minor), props.name)
            limits = table._replace(max_threads=getattr(props, "max_threads_per_block", table.max_threads),
                                    shared_optin=getattr(props, "shared_memory_per_block_optin", table.shared_optin))
        _LIMITS[index] = limits
    return limits


def last_launch_text():
    """The last launch as kernel[grid, block, stream, shared] (None before the first)."""
    return checks.config_text(_last_launch.kernel.name, _last_launch.config) if _last_launch else None


def synchronize(device=None):
    """torch.cuda.synchronize(device); a kernel fault CUDA reports there becomes a KernelFaultError that names the
    last kernel numba2cuda launched (CUDA reports a fault at the next synchronisation, not at the launch)."""
    try:
        torch.cuda.synchronize(device)
    except RuntimeError as exc:
        if _last_launch is None:
            raise  # torch's own error: no kernel of ours ran
        raise checks.fault_error(last_launch_text(), exc) from exc


class _Words:
    """A device array of records seen as the words or bytes torch holds (RNG states: uint64 words; a user's
    records: their bytes), one more dimension."""

    def __init__(self, cai, units, typestr):
        strides = cai.get("strides")
        self.__cuda_array_interface__ = dict(
            cai, shape=tuple(cai["shape"]) + (units,), typestr=typestr, descr=[("", typestr)],
            strides=None if strides is None else tuple(strides) + (int(typestr[2:]),))


RECORD_WORDS = {"xoroshiro128p_type": 2}  # record element types -> uint64 words per record


def record_units(p):
    """(torch dtype, units per record) a record parameter's tensor holds, or None for another parameter: the
    uint64 words of RNG states, the bytes of a user's record (its itemsize is in Numba's spelling of it)."""
    if p.dtype in RECORD_WORDS:
        return torch.uint64, RECORD_WORDS[p.dtype]
    if p.dtype.startswith("Record("):
        return torch.uint8, int(p.dtype.rsplit(";", 2)[1])
    return None


def _numpy_words(kernel, p, a):
    """A NumPy array of records viewed as its words or bytes: the memory the kernel reads and writes."""
    if p.dtype in RECORD_WORDS:
        if a.dtype.itemsize != 8 * RECORD_WORDS[p.dtype] or any(a.dtype.fields[n][0].str != "<u8"
                                                                for n in a.dtype.names):
            raise TypeError(f"{kernel}(): argument '{p.name}' must be xoroshiro128p states (records of two uint64), "
                            f"got records {a.dtype}")
    else:
        checks.check_numpy(kernel, p, a)
    if not a.flags.c_contiguous:
        raise TypeError(f"{kernel}(): argument '{p.name}' must be C-contiguous; pass np.ascontiguousarray({p.name})")
    unit, units = record_units(p)
    # through 1-D: NumPy changes a 0-d array's dtype only to one of the same size (a record argument is 0-d)
    return a.reshape(-1).view("<u8" if unit == torch.uint64 else "u1").reshape(a.shape + (units,))


def _record_words(a, kernel="", p=None):
    cai = a.__cuda_array_interface__
    if not str(cai.get("typestr", "")).startswith("|V"):
        return a
    descr = cai.get("descr")
    dtype = getattr(a, "dtype", None)
    if not descr and getattr(dtype, "names", None):  # Numba's device arrays leave descr out: their dtype says it
        descr = dtype.descr
    fields = [f for f in descr or [] if f[0]]
    if fields and all(f[1] == "<u8" for f in fields) and (p is None or p.dtype in RECORD_WORDS):
        return _Words(cai, len(fields), "<u8")
    if p is not None and getattr(dtype, "names", None):
        checks.check_array(kernel, p, checks.numpy_dtype_name(dtype), len(cai["shape"]),
                           cai.get("strides") is None, "a device array")
        return _Words(cai, dtype.itemsize, "|u1")
    raise TypeError(f"records of {descr} are not supported here; pass a NumPy array or a Numba device array of "
                    "them, whose dtype says their layout")


class Launch:
    """A configured kernel: what kernel[grid, block, stream, shared_bytes] returns."""

    __slots__ = ("kernel", "config")

    def __init__(self, kernel, config):
        self.kernel = kernel
        self.config = config

    def __call__(self, *args):
        global _last_launch
        kernel = self.kernel
        if len(args) != kernel.nparams:
            raise TypeError(f"{kernel.name}() takes {kernel.nparams} arguments ({len(args)} given)")
        if kernel.spread_positions:  # the binding takes a tuple's items (a complex number's parts) one by one
            return kernel.launch_converted(self, args)
        tensor = torch.Tensor
        for i in kernel.array_positions:
            if type(args[i]) is not tensor:
                return kernel.launch_converted(self, args)
        try:
            problem = kernel.ext_fn(*self.config, *args)
        except TypeError:  # a scalar the binding does not take as it is (a float for an int, a NumPy bool)
            return kernel.launch_converted(self, args)
        if problem is not None:
            kernel.refuse(self, args, problem)
        _last_launch = self


class Kernel:
    """A translated kernel; launch it as kernel[grid, block], [grid, block, stream] or
    [grid, block, stream, shared_bytes].

    params: (name, type, written, rule) per parameter, as numba2cuda's kernel metadata lists them (type as Numba's
    signature spells it; rule "" or e.g. "> 0: it sizes the shared-memory views ms, ns"); static_shared: the
    kernel's own __shared__ bytes (the opt-in maximum covers them and the dynamic bytes together)."""

    def __init__(self, ext_fn, name, params, doc=None, static_shared=0, tuning=None):
        self.ext_fn = ext_fn
        self.name = name
        self.params = tuple(checks.Param(*p) for p in params)
        self.param_names = tuple(p.name for p in self.params)
        self.nparams = len(self.params)
        self.array_positions = [i for i, p in enumerate(self.params) if p.is_array]
        self.written = {i for i in self.array_positions if self.params[i].written}
        self.spread_positions = [i for i, p in enumerate(self.params) if p.spread]  # tuples and complex numbers
        # the parameter each of the binding's arguments belongs to (a tuple's items are arguments of their own)
        self.binding_params = [i for i, p in enumerate(self.params) for _ in p.leaves()]
        self.static_shared = static_shared
        self.__doc__ = doc
        self._configs = {}
        self.tuning = tuning or {}  # {param: {size label: fastest value}}, from `numba2cuda bench --record`

    def tuned(self, param, size=None, default=None):
        """The fastest value of PARAM that `numba2cuda bench --autotune --record` measured at SIZE (a size
        label such as "bench"), else DEFAULT. Without SIZE: the recorded value if every size agreed on one.

        Only an answer for the caller to pass on, as in k[grid, (tw, tw)](..., k.tuned("tw", "bench", 16)):
        a launch never consults the table, so a value the caller passes is never changed."""
        by_size = self.tuning.get(param, {})
        if size is not None:
            return by_size.get(str(size), default)
        values = set(by_size.values())
        return values.pop() if len(values) == 1 else default

    def __repr__(self):
        return f"<{__name__} kernel {self.name}({', '.join(self.param_names)})>"

    def __getitem__(self, config):
        try:
            return self._configs[config]
        except (KeyError, TypeError):
            pass
        launch = Launch(self, checks.launch_config(self.name, config, device_limits(), self.static_shared))
        try:
            if len(self._configs) < 64:
                self._configs[config] = launch
        except TypeError:
            pass  # an unhashable stream object or list: not cached
        return launch

    def check_values(self, args):
        """Array types and scalar values, in the binding's order, raising at the first problem; returns the scalars
        as the binding takes them. Arrays that are not tensors yet are checked here if they are NumPy arrays."""
        values = list(args)
        for i in self.array_positions:
            p, a = self.params[i], args[i]
            if isinstance(a, torch.Tensor):
                self.check_tensor_type(p, a)
            elif hasattr(a, "__cuda_array_interface__"):
                continue  # viewed as a tensor, then checked
            elif hasattr(a, "__array_interface__") or type(a).__module__ == "numpy":
                import numpy as np

                values[i] = np.asarray(a)
                if record_units(p) and values[i].dtype.names is not None:
                    values[i] = _numpy_words(self.name, p, values[i])  # records: their words or bytes, same memory
                else:
                    checks.check_numpy(self.name, p, values[i])
            else:
                raise checks.not_an_array(self.name, p, a, "a torch tensor, a __cuda_array_interface__ object or a "
                                                           "NumPy array")
        for i, p in enumerate(self.params):
            if not p.is_array:
                values[i] = checks.scalar(self.name, p, args[i])
        return values

    def check_tensor_type(self, p, t):
        units = record_units(p)
        if units:  # records as torch holds them: RNG states' uint64 words or a record's bytes, one more dimension
            unit, n = units
            if t.dtype != unit or t.dim() != p.ndim + 1 or t.shape[-1] != n or not t.is_contiguous():
                what = "the xoroshiro128p states create_xoroshiro128p_states makes, or their words" \
                    if unit == torch.uint64 else f"an array of records {p.dtype}, or their bytes"
                raise TypeError(f"{self.name}(): argument '{p.name}' must be {what} (a C-contiguous "
                                f"{str(unit).replace('torch.', '')} tensor of shape (..., {n})), got a "
                                f"{str(t.dtype).replace('torch.', '')} tensor of shape {tuple(t.shape)}")
            return
        fortran = t.dim() < 2 or t.permute(*reversed(range(t.dim()))).is_contiguous()
        checks.check_array(self.name, p, str(t.dtype).replace("torch.", ""), t.dim(),
                           p.contiguous(t.is_contiguous(), fortran), "a tensor",
                           f"; pass {p.name}.T.contiguous().T" if p.order == "F" else f"; pass {p.name}.contiguous()")

    def check_devices(self, tensors):
        arrays = [(self.params[i], tensors[i]) for i in self.array_positions]
        for p, t in arrays:
            if not t.is_cuda:
                raise TypeError(f"{self.name}(): argument '{p.name}' must be on a CUDA device, got a tensor on "
                                f"{t.device}; pass {p.name}.cuda()")
            first_p, first = arrays[0]
            if t.device != first.device:
                raise ValueError(f"{self.name}(): argument '{p.name}' is on {t.device} but argument '{first_p.name}' "
                                 f"is on {first.device}; one launch runs on one device")

    def refuse(self, launch, args, problem):
        """Raise what the binding refused: an argument's index (the checks here say what is wrong with it), a CUDA
        error (code, name, text) of the launch, or the text of an unexpected C++ exception."""
        if isinstance(problem, tuple):
            code, name, text = problem
            raise checks.launch_error(self.name, launch.config, code, name, text, last_launch_text())
        if isinstance(problem, int):
            self.check_devices(self.check_values(args))
            name = self.param_names[self.binding_params[problem]] if problem < len(self.binding_params) else problem
            raise RuntimeError(f"{self.name}(): the binding refused argument '{name}', which "
                               "numba2cuda's checks pass: please report this")
        raise RuntimeError(f"{self.name}: {problem}")

    def launch_converted(self, launch, args):
        """Arguments that are not all torch CUDA tensors or plain Python scalars: __cuda_array_interface__ objects
        are viewed without a copy; NumPy arrays are copied to the device and, if the kernel writes them, back (as
        Numba does); scalars become the Python type the binding takes. Each is checked before anything launches."""
        global _last_launch
        records = [(a, checks.held_record(a)) for i, a in enumerate(args) if i in self.array_positions]
        records = [(a, held) for a, held in records if held is not None]  # record arguments, by reference
        if records:
            by_id = {id(a): held for a, held in records}
            args = [by_id.get(id(a), a) for a in args]
        converted = self.check_values(args)  # everything but the devices, before anything is copied to one
        copies = []
        for i in self.array_positions:
            a = converted[i]
            if isinstance(a, torch.Tensor):
                continue
            if hasattr(a, "__cuda_array_interface__"):
                converted[i] = torch.as_tensor(_record_words(a, self.name, self.params[i]), device="cuda")
                self.check_tensor_type(self.params[i], converted[i])  # now that torch describes it
                continue
            # a NumPy array, in its memory order (a column-major parameter's is F); a read-only one is copied
            # first, without torch.from_numpy's warning about read-only arrays
            converted[i] = torch.from_numpy(a if a.flags.writeable else a.copy(order="K")).to("cuda")
            if self.params[i].written:
                copies.append((a, converted[i]))
        self.check_devices(converted)
        flat = [x for p, a in zip(self.params, converted) for x in checks.flat(p, a)]
        problem = self.ext_fn(*launch.config, *flat)
        if problem is not None:
            self.refuse(launch, converted, problem)
        _last_launch = launch
        if copies:
            try:
                if launch.config[6] == CURRENT_STREAM:
                    torch.cuda.current_stream().synchronize()
                else:
                    torch.cuda.synchronize()
            except RuntimeError as exc:
                raise checks.fault_error(last_launch_text(), exc) from exc
            for host, dev in copies:
                host[...] = dev.cpu().numpy()
        for record, held in records:
            checks.write_back(record, held)


def _array_type(a):
    """(element type name, ndim) of an array argument, or None for a scalar."""
    if isinstance(a, torch.Tensor):
        return str(a.dtype).replace("torch.", ""), a.dim()
    iface = getattr(a, "__cuda_array_interface__", None)
    if iface is not None:
        import numpy as np

        return np.dtype(iface["typestr"]).name, len(iface["shape"])
    if hasattr(a, "dtype") and hasattr(a, "ndim") and getattr(a, "ndim", 0) > 0:
        return str(a.dtype), int(a.ndim)
    return None


class Dispatcher:
    """A kernel compiled for several signatures (@cuda.jit([sig1, sig2])): like Numba's dispatcher, each launch
    runs the translation whose array parameters take the arguments' element types and dimensions."""

    def __init__(self, name, kernels, signatures):
        self.name = name
        self.kernels = list(kernels)  # Kernel per signature
        self.signatures = list(signatures)  # per kernel: [(dtype name, ndim) or None per parameter]
        self.__doc__ = "\n".join(k.__doc__ or k.name for k in self.kernels)

    def __repr__(self):
        return f"<{__name__} kernel {self.name} ({len(self.kernels)} signatures)>"

    def __getitem__(self, config):
        return _DispatchLaunch(self, config)

    def pick(self, args):
        got = [_array_type(a) for a in args]
        for kernel, signature in zip(self.kernels, self.signatures):
            if len(signature) == len(args) and all(want is None or want == have for want, have in zip(signature, got)):
                return kernel
        shown = ", ".join(f"{t[0]}[{t[1]}-D]" if t else type(a).__name__ for t, a in zip(got, args))
        raise TypeError(f"{self.name}(): no signature takes ({shown}); compiled for: "
                        + "; ".join(k.__doc__ or k.name for k in self.kernels))


class _DispatchLaunch:
    __slots__ = ("dispatcher", "config")

    def __init__(self, dispatcher, config):
        self.dispatcher = dispatcher
        self.config = config

    def __call__(self, *args):
        return self.dispatcher.pick(args)[self.config](*args)
