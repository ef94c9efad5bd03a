"""translated module -> CPU-runtime kernels launched like Numba's: `k[grid, block](*numpy_arrays)`."""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from .cpurun import compile_cpu, gpu_only, launch
from . import launch_checks as checks
from .dropin import extension_name, kernel_metadata, program_for
from .ufunc import NumpyBackend, UFunc
from ..frontend.module import parse_file, parse_source
from ..lower.program import Options
from ..errors import UserError
from ..emit.render import render_program
from ..lower.names import entry_name

CTYPES = {
    "bool": ctypes.c_bool, "int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32,
    "int64": ctypes.c_int64, "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64, "float32": ctypes.c_float, "float64": ctypes.c_double,
}


# record element types -> their NumPy dtype, as Numba lays them out (numba.cuda.random's aligned struct)
RECORD_DTYPES = {"xoroshiro128p_type": np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)}


def check_array(kernel, p, a) -> None:
    """An array argument as the CPU runtime takes it: a NumPy array (records: as Numba makes them), checked as the
    drop-in checks its arguments (launch_checks.py)."""
    if not isinstance(a, np.ndarray):
        raise checks.not_an_array(kernel, p, a, "a NumPy array on the CPU runtime")
    if p.dtype in RECORD_DTYPES:  # RNG states: the record array Numba makes, as it is
        if a.dtype != RECORD_DTYPES[p.dtype] or a.ndim != p.ndim or not a.flags.c_contiguous:
            raise TypeError(f"{kernel}(): argument '{p.name}' must be a C-contiguous {p.ndim}-D array "
                            "of xoroshiro128p states (as create_xoroshiro128p_states makes them), got "
                            f"{a.dtype} {a.ndim}-D")
    else:
        checks.check_numpy(kernel, p, a)


def scalar_value(kernel, p, a):
    """A scalar argument as the CPU runtime's launcher takes it (a __half by value is its bits, an unsigned
    short); a tuple's items so, in a tuple."""
    if p.spread:
        return tuple(scalar_value(kernel, i, v) for i, v in zip(p.items, checks.scalar(kernel, p, a)))
    if p.type == "float16":
        return int(np.float16(checks.scalar(kernel, p, a)).view(np.uint16))
    return checks.scalar(kernel, p, a)


def _ctype(p):
    return ctypes.c_uint16 if p.type == "float16" else CTYPES[p.type]  # a __half by value is its bits


class CpuKernel:
    """One translated kernel on the CPU runtime, configured with [grid, block, stream, shared_bytes]. A launch is
    checked as the drop-in's is (launch_checks.py), against the limits of numba2cuda's default target (sm_90),
    before the emitted launcher runs."""

    def __init__(self, lib, fn):
        self.lib = lib
        self.name, params, _, self.static_shared = kernel_metadata(fn)  # the name the user calls it by
        self.symbol = fn.c_name  # the library's launcher is its C name's
        self.params = tuple(checks.Param(*p) for p in params)
        self.ctypes = [None if p.is_array else [_ctype(i) for i in p.leaves()] if p.spread else _ctype(p)
                       for p in self.params]

    def __getitem__(self, config):
        gx, gy, gz, bx, by, bz, _, shared = checks.launch_config(self.name, config, checks.table_limits(),
                                                                  self.static_shared)
        return lambda *args: self.launch((gx, gy, gz), (bx, by, bz), shared, args)

    def launch(self, grid, block, shared, args):
        checks.arity(self.name, len(self.params), args)
        flat, types, records = [], [], []
        for p, ctype, a in zip(self.params, self.ctypes, args):
            held = checks.held_record(a) if p.is_array and p.ndim == 0 else None
            if held is not None:  # a record argument: passed by reference, copied back after the launch
                records.append((a, held))
                a = held
            if p.is_array:
                check_array(self.name, p, a)
                flat.append(a)
                types.append(None)
                flat.extend(a.shape)
                types.extend([ctypes.c_int64] * a.ndim)
            elif p.spread:  # a tuple: C takes an item per parameter (an inner tuple's items too)
                flat.extend(checks.flat(p, scalar_value(self.name, p, a)))
                types.extend(ctype)
            else:
                flat.append(scalar_value(self.name, p, a))
                types.append(ctype)
        launch(self.lib, self.symbol, grid, block, shared, *flat, argtypes=types)
        for record, held in records:
            checks.write_back(record, held)


class CpuModule:
    def __init__(self, program, lib, cu_text):
        self.cu = cu_text
        self.program = program
        for fn in program.kernels:
            setattr(self, entry_name(fn), CpuKernel(lib, fn))
        for name, info in getattr(program, "ufuncs", {}).items():
            kernels = {loop.kernel: getattr(self, loop.kernel) for loop in info.loops}
            ufunc = UFunc(info, kernels, NumpyBackend())
            ufunc.lib = lib  # its kernels' library: set_poison() etc. reach it as for a kernel
            setattr(self, name, ufunc)


def load_cpu(path=None, *, source=None, cu_text=None, options: Options | None = None) -> CpuModule:
    """Translate (or take `cu_text`, e.g. a hand-edited file or the LLM backend's) and build it for the CPU runtime.
    With `cu_text`, kernels the rules reject still launch: their parameters come from the frontend alone."""
    info = parse_source(source, "<string>") if source is not None else \
        parse_file(path, (options or Options()).import_module, options or Options())
    program = program_for(info, options, shells=cu_text is not None)
    text = cu_text if cu_text is not None else render_program(program, Path(info.path).name)
    why = gpu_only(text)
    if why:
        raise UserError(f"{info.path}: error: the translation runs on a GPU only: {why}\n"
                        "    hint: load it with numba2cuda.load() on a machine with an NVIDIA GPU")
    lib = compile_cpu(text, name=(extension_name(info.path) if path else "") or "module")
    return CpuModule(program, lib, text)
