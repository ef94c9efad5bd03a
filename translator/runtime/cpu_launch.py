"""translated module -> CPU-runtime kernels launched like Numba's: `k[grid, block](*numpy_arrays)`."""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from ..ir import typesys as T
from .cpurun import compile_cpu, launch
from .ufunc import NumpyBackend, UFunc
from .dropin import extension_name, program_for
from ..frontend.module import parse_file, parse_source
from ..lower.program import Options
from ..emit.render import render_program

CTYPES = {
    "bool": ctypes.c_bool, "int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32,
    "int64": ctypes.c_int64, "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64, "float32": ctypes.c_float, "float64": ctypes.c_double,
}


def numpy_dtype(t: T.Scalar) -> np.dtype:
    """The NumPy dtype of an array element type; records as Numba lays them out (aligned structs)."""
    if t == T.XOROSHIRO128P:
        return np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)
    return np.dtype(t.name)


class CpuKernel:
    """One translated kernel on the CPU runtime, configured with [grid, block, stream, shared_bytes]."""

    def __init__(self, lib, fn):
        self.lib = lib
        self.name = fn.c_name
        self.params = fn.params

    def __getitem__(self, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise ValueError(f"{self.name}: launch as kernel[grid, block], [grid, block, stream] "
                             "or [grid, block, stream, shared_bytes]")
        grid, block = config[0], config[1]
        shared = int(config[3]) if len(config) == 4 else 0
        return lambda *args: self.launch(grid, block, shared, args)

    def launch(self, grid, block, shared, args):
        if len(args) != len(self.params):
            raise TypeError(f"{self.name}() takes {len(self.params)} arguments ({len(args)} given)")
        flat, types = [], []
        for p, a in zip(self.params, args):
            if isinstance(p.type, T.Array):
                want = numpy_dtype(p.type.dtype)
                if not isinstance(a, np.ndarray) or a.dtype != want or a.ndim != p.type.ndim:
                    got = f"{a.dtype}[{a.ndim}-D]" if isinstance(a, np.ndarray) else type(a).__name__
                    raise TypeError(f"{self.name}: argument '{p.name}' must be a {p.type.ndim}-D {want} array, got {got}")
                if not a.flags.c_contiguous:
                    raise TypeError(f"{self.name}: argument '{p.name}' must be C-contiguous (np.ascontiguousarray)")
                flat.append(a)
                types.append(None)
                flat.extend(a.shape)
                types.extend([ctypes.c_int64] * a.ndim)
            elif p.type == T.FLOAT16:  # a __half by value: its bits, as an unsigned short
                flat.append(int(np.float16(a).view(np.uint16)))
                types.append(ctypes.c_uint16)
            else:
                flat.append(a)
                types.append(CTYPES[p.type.name])
        launch(self.lib, self.name, grid, block, shared, *flat, argtypes=types)


class CpuModule:
    def __init__(self, program, lib, cu_text):
        self.cu = cu_text
        self.program = program
        for fn in program.kernels:
            setattr(self, fn.c_name, CpuKernel(lib, fn))
        for name, info in getattr(program, "ufuncs", {}).items():
            kernels = {loop.kernel: getattr(self, loop.kernel) for loop in info.loops}
            ufunc = UFunc(info, kernels, NumpyBackend())
            ufunc.lib = lib  # its kernels' library: set_poison() etc. reach it as for a kernel
            setattr(self, name, ufunc)


def load_cpu(path=None, *, source=None, cu_text=None, options: Options | None = None) -> CpuModule:
    """Translate (or take `cu_text`, e.g. a hand-edited file or the LLM backend's) and build it for the CPU runtime.
    With `cu_text`, kernels the rules reject still launch: their parameters come from the frontend alone."""
    info = parse_source(source, "<string>") if source is not None else parse_file(path)
    program = program_for(info, options, shells=cu_text is not None)
    text = cu_text if cu_text is not None else render_program(program, Path(info.path).name)
    lib = compile_cpu(text, name=(extension_name(info.path) if path else "") or "module")
    return CpuModule(program, lib, text)
