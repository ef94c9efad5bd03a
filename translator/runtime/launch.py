"""launch configuration, streams and argument conversion -> one call of a translated kernel's binding.

The one copy of this logic: numba2cuda.load() uses it, and `numba2cuda package` writes this file
verbatim into the generated project as `_launch.py`. So it imports only torch (and NumPy when a
NumPy array is passed), never numba2cuda, Numba or libcst.
"""

import torch

CURRENT_STREAM = -1  # the binding reads torch's current stream


def _dims(value, what, kernel):
    if isinstance(value, int):
        dims = (value,)
    else:
        try:
            dims = tuple(int(v) for v in value)
        except TypeError:
            raise TypeError(f"{kernel}: {what} must be an int or a tuple of 1 to 3 ints, got {value!r}") from None
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise ValueError(f"{kernel}: {what} must have 1 to 3 positive sizes, got {value!r}")
    return dims + (1,) * (3 - len(dims))


def stream_handle(stream):
    """A raw cudaStream_t from a torch, CuPy or Numba stream, or an int; 0 is the default stream as in Numba."""
    if stream is None:
        return CURRENT_STREAM
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    handle = getattr(stream, "handle", None)  # numba.cuda.cudadrv.driver.Stream
    if handle is not None:
        return int(getattr(handle, "value", handle) or 0)
    return int(stream)


class _Words:
    """A device array of records (create_xoroshiro128p_states' states) seen as its uint64 words, which torch holds."""

    def __init__(self, cai, words):
        strides = cai.get("strides")
        self.__cuda_array_interface__ = dict(
            cai, shape=tuple(cai["shape"]) + (words,), typestr="<u8", descr=[("", "<u8")],
            strides=None if strides is None else tuple(strides) + (8,))


def _record_words(a):
    cai = a.__cuda_array_interface__
    if not str(cai.get("typestr", "")).startswith("|V"):
        return a
    fields = [f for f in cai.get("descr", []) if f[0]]
    if not fields or any(f[1] != "<u8" for f in fields):
        raise TypeError(f"records of {cai.get('descr')} are not supported; only records of uint64 fields "
                        "(numba.cuda.random's states)")
    return _Words(cai, len(fields))


class Launch:
    """A configured kernel: what kernel[grid, block, stream, shared_bytes] returns."""

    __slots__ = ("kernel", "config")

    def __init__(self, kernel, config):
        self.kernel = kernel
        self.config = config

    def __call__(self, *args):
        kernel = self.kernel
        if len(args) != kernel.nparams:
            raise TypeError(f"{kernel.name}() takes {kernel.nparams} arguments ({len(args)} given)")
        tensor = torch.Tensor
        for i in kernel.array_positions:
            if type(args[i]) is not tensor:
                return kernel.launch_converted(self.config, args)
        kernel.ext_fn(*self.config, *args)


class Kernel:
    """A translated kernel; launch it as kernel[grid, block], [grid, block, stream] or [grid, block, stream, shared_bytes]."""

    def __init__(self, ext_fn, name, param_names, array_positions, written, doc=None, tuning=None):
        self.ext_fn = ext_fn
        self.name = name
        self.param_names = param_names
        self.nparams = len(param_names)
        self.array_positions = array_positions
        self.written = written
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
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise ValueError(f"{self.name}: launch as {self.name}[grid, block], [grid, block, stream] or "
                             "[grid, block, stream, shared_bytes]")
        grid = _dims(config[0], "grid", self.name)
        block = _dims(config[1], "block", self.name)
        stream = stream_handle(config[2]) if len(config) >= 3 else CURRENT_STREAM
        shared = int(config[3]) if len(config) == 4 else 0
        if shared < 0:
            raise ValueError(f"{self.name}: shared memory bytes must be >= 0, got {shared}")
        launch = Launch(self, grid + block + (stream, shared))
        try:
            if len(self._configs) < 64:
                self._configs[config] = launch
        except TypeError:
            pass  # an unhashable stream object: not cached
        return launch

    def launch_converted(self, config, args):
        """Arrays that are not torch CUDA tensors: __cuda_array_interface__ objects are viewed without a copy;
        NumPy arrays are copied to the device and, if the kernel writes them, back (as Numba does)."""
        converted = list(args)
        copies = []
        for i in self.array_positions:
            a = args[i]
            if isinstance(a, torch.Tensor):
                continue
            name = self.param_names[i]
            if hasattr(a, "__cuda_array_interface__"):
                converted[i] = torch.as_tensor(_record_words(a), device="cuda")
            elif hasattr(a, "__array_interface__") or type(a).__module__ == "numpy":
                import numpy as np

                host = np.asarray(a)
                if not host.flags.c_contiguous:
                    raise TypeError(f"{self.name}(): argument '{name}' must be C-contiguous "
                                    "(numba2cuda indexes row-major); pass np.ascontiguousarray(...)")
                if host.dtype.names is not None:  # records (RNG states): their uint64 words, same memory
                    host = host.view("<u8").reshape(host.shape + (host.dtype.itemsize // 8,))
                converted[i] = torch.from_numpy(host).to("cuda")
                if i in self.written:
                    copies.append((host, converted[i]))
            else:
                raise TypeError(f"{self.name}(): argument '{name}' must be an array (torch tensor, "
                                f"__cuda_array_interface__ object or NumPy array), got {type(a).__name__}")
        self.ext_fn(*config, *converted)
        if copies:
            stream = config[6]
            if stream == CURRENT_STREAM:
                torch.cuda.current_stream().synchronize()
            else:
                torch.cuda.synchronize()
            for host, dev in copies:
                host[...] = dev.cpu().numpy()
