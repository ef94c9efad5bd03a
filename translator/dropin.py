"""numba module path -> built extension whose kernels launch exactly like Numba's: k[grid, block, stream, shared](*args)."""

from __future__ import annotations

from pathlib import Path

from . import typesys as T
from .bindings import render_bindings
from .frontend import parse_file
from .lower import Options, build_program
from .render import render_program

CURRENT_STREAM = -1  # the binding reads torch's current stream


def _dims(value, what, kernel) -> tuple:
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


def stream_handle(stream) -> int:
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
        tensor = kernel.torch.Tensor
        for i in kernel.array_positions:
            if type(args[i]) is not tensor:
                return kernel.launch_converted(self.config, args)
        kernel.ext_fn(*self.config, *args)


class Kernel:
    def __init__(self, ext_fn, fn, torch):
        self.ext_fn = ext_fn
        self.name = fn.c_name
        self.params = fn.params
        self.nparams = len(fn.params)
        self.array_positions = [i for i, p in enumerate(fn.params) if p.array is not None]
        self.written = {i for i in self.array_positions if fn.params[i].array.written}
        self.torch = torch
        self._configs: dict = {}

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
        torch = self.torch
        converted = list(args)
        copies = []
        for i in self.array_positions:
            a = args[i]
            if isinstance(a, torch.Tensor):
                continue
            name = self.params[i].name
            if hasattr(a, "__cuda_array_interface__"):
                converted[i] = torch.as_tensor(a, device="cuda")
            elif hasattr(a, "__array_interface__") or type(a).__module__ == "numpy":
                import numpy as np

                host = np.asarray(a)
                if not host.flags.c_contiguous:
                    raise TypeError(f"{self.name}(): argument '{name}' must be C-contiguous "
                                    "(numba2cuda indexes row-major); pass np.ascontiguousarray(...)")
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


class Module:
    """The translated kernels of one Numba module, as attributes."""

    def __init__(self, path, program, ext, cu_text, cpp_text):
        import torch

        self.path = path
        self.cu = cu_text
        self.cpp = cpp_text
        self.extension = ext
        self.kernels = {}
        for fn in program.kernels:
            kernel = Kernel(getattr(ext, fn.c_name), fn, torch)
            self.kernels[fn.c_name] = kernel
            setattr(self, fn.c_name, kernel)

    def __repr__(self):
        return f"<numba2cuda module {self.path}: {', '.join(self.kernels)}>"


def sources(path, options: Options | None = None):
    """(program, kernel .cu text, binding .cpp text) for a Numba module."""
    info = parse_file(path)
    program = build_program(info, options or Options())
    name = Path(path).name
    return program, render_program(program, name), render_bindings(program, name)


def load(path, *, specialize: dict | None = None, types: dict | str | None = None, kernels=None,
         assume_nonnegative: bool = True, extra_cuda_cflags=(), progress: bool = True) -> Module:
    """Translate, build (cached by content) and load a Numba module's kernels as drop-in replacements.

    specialize: {"tw": (8, 16, 32)} per parameter, or {"*": ()} to build only generic kernels.
    """
    from .build import build_extension

    if isinstance(types, str):
        types = T.parse_types_option(types)
    options = Options(kernels=list(kernels or []), types=dict(types or {}), specialize=dict(specialize or {}),
                      assume_nonnegative=assume_nonnegative)
    program, cu_text, cpp_text = sources(path, options)
    name = "".join(c if c.isalnum() else "_" for c in Path(path).stem)
    fast_math = ["--use_fast_math"] if any(k.options.get("fastmath") for k in program.kernels) else []
    ext = build_extension(name, cu_text, cpp_text, extra_cuda_cflags=[*fast_math, *extra_cuda_cflags],
                          progress=progress)
    return Module(str(path), program, ext, cu_text, cpp_text)
