"""one launch of a CPU-runtime library, with the verifier's checks -> the arrays after it; run in a child process.

The worker side of the CPU tier: translator/sandbox.py's Worker calls `run_case` in a child, so that a
translation that corrupts memory, divides by zero or never ends takes only the child with it. Any caller
that runs an untrusted translation on the CPU (verify, the LLM backend's gate) uses the same entry point:

    Worker().call("translator.runtime.cpu_worker:run_case", args, arrays)

args:
    lib      path of a library from cpurun.build_cpu (with cpurun.CHECK_FLAGS for the checks)
    kernel   the kernel's name (its extern "C" <kernel>_launch)
    grid, block, shared    the launch configuration (1 to 3 ints each; dynamic shared bytes)
    params   one entry per kernel parameter: {"name", "array": true, "dtype", "ndim", "order"} or
             {"name", "array": false, "dtype", "value"} (a tuple parameter: lists of dtypes and values, its items)
    poison   byte for uninitialised shared memory and stacks (0..255), or null
    order    0: a block's threads run in order, 1: backward, 2: in an order drawn from `seed`
    checks   {"memory": bool, "races": bool, "signals": bool}: see runtime/n2c_cpu_check.h
arrays: the array arguments, in parameter order.
Returns ({"error": the runtime's message or null, "checked": bool}, the arrays after the launch).
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from functools import lru_cache

import numpy as np

from .cpurun import CpuLaunchError, launch
from .launch_checks import memory_order

_MEMORY, _RACES, _SIGNALS = 1, 2, 4


@lru_cache(maxsize=None)
def _library(path: str):
    from ..confine import confine, requested

    if requested():  # NUMBA2CUDA_CONFINE=1: a model's code runs here; nothing it runs may start programs or write
        tls_symbols(path)  # readelf first: a confined process cannot start it
        confine()
    lib = ctypes.CDLL(path)
    lib.n2c_cpu_set_poison.argtypes = [ctypes.c_int]
    lib.n2c_cpu_set_poison.restype = None
    try:
        lib.n2c_cpu_check_begin.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_ulonglong]
        lib.n2c_cpu_check_alloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t, ctypes.c_char_p]
        lib.n2c_cpu_check_alloc.restype = ctypes.c_void_p
        lib.n2c_cpu_check_tls.argtypes = [ctypes.c_size_t, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_int]
        lib.n2c_cpu_check_end.argtypes = []
        checked = True
    except AttributeError:  # built without CHECK_FLAGS
        checked = False
    return lib, checked


@lru_cache(maxsize=None)
def tls_symbols(path: str) -> tuple:
    """((offset, bytes, name, is_user_array), ...) of the library's thread_local variables: its static
    __shared__ arrays and the runtime's own, from the symbol table (empty without binutils' readelf)."""
    readelf = shutil.which("readelf")
    if not readelf:
        return ()
    try:
        out = subprocess.run([readelf, "-sW", "-C", path], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ()
    seen, result = set(), []
    for line in out.splitlines():
        fields = line.split(None, 7)
        if len(fields) < 8 or fields[3] != "TLS" or fields[6] == "UND":
            continue
        offset, size, name = int(fields[1], 16), int(fields[2], 0), fields[7]
        if name == "n2c_dynamic_smem" or (offset, name) in seen:
            continue  # the runtime checks the dynamic buffer itself
        seen.add((offset, name))
        user = not name.startswith(("n2c_cpu::", "n2c_"))
        var = name.rpartition("::")[2] if user else name
        where = name.rpartition("::")[0].split("(")[0].replace("void ", "") if user and "::" in name else ""
        label = f"shared array {var}" + (f" of {where}" if where else "") + f" ({size} bytes)"
        result.append((offset, size, label, user))
    return tuple(result)


def _dims(v) -> tuple:
    return tuple(int(x) for x in v) if isinstance(v, (list, tuple)) else (int(v),)


def run_case(args: dict, arrays: list):
    lib, checked = _library(args["lib"])
    poison = args.get("poison")
    lib.n2c_cpu_set_poison(-1 if poison is None else int(poison) & 0xFF)
    checks = args.get("checks") or {}
    flags = ((_MEMORY if checks.get("memory", True) else 0) | (_RACES if checks.get("races", True) else 0)
             | (_SIGNALS if checks.get("signals", True) else 0))
    if checked:
        lib.n2c_cpu_check_begin(flags, int(args.get("order", 0)), int(args.get("seed", 0)) & (2**64 - 1))
        for offset, size, label, user in tls_symbols(args["lib"]):
            lib.n2c_cpu_check_tls(offset, size, label.encode(), int(user))
    views, flat, types = [], [], []
    given = iter(arrays)
    try:
        for p in args["params"]:
            if not p["array"] and isinstance(p["dtype"], list):  # a tuple: one C parameter per item
                flat.extend(p["value"])
                types.extend(_scalar_ctype(d) for d in p["dtype"])
                continue
            if not p["array"]:
                flat.append(p["value"])
                types.append(_scalar_ctype(p["dtype"]))
                continue
            a = np.require(next(given), requirements=p.get("order", "C"))  # 0-d stays 0-d
            view = _guarded(lib, a, p["name"]) if checked else a.copy(order="K")
            views.append(view)
            flat.append(view)
            types.append(None)
            flat.extend(int(d) for d in a.shape)
            types.extend([ctypes.c_int64] * a.ndim)
        error = None
        try:
            launch(lib, args["kernel"], _dims(args["grid"]), _dims(args["block"]), int(args.get("shared", 0)),
                   *flat, argtypes=types)
        except CpuLaunchError as exc:
            error = exc.message or str(exc)
        out = [np.array(v, copy=True) for v in views]  # before check_end unmaps the guarded copies
    finally:
        if checked:
            lib.n2c_cpu_check_end()
    return {"error": error, "checked": checked}, out


def _guarded(lib, a: np.ndarray, name: str) -> np.ndarray:
    """A copy of `a` in memory the runtime checks every access against (n2c_cpu_check_alloc)."""
    shape = ", ".join(map(str, a.shape))
    label = f"global array {name} ({a.dtype}[{shape}])"
    ptr = lib.n2c_cpu_check_alloc(a.nbytes, a.itemsize, label.encode())
    if not ptr:
        raise MemoryError(f"cannot map {a.nbytes} bytes for {name}")
    if a.nbytes == 0:
        return np.empty(a.shape, a.dtype)
    view = np.frombuffer((ctypes.c_char * a.nbytes).from_address(ptr), dtype=a.dtype).reshape(
        a.shape, order=memory_order(a))  # as the kernel indexes it
    view[...] = a
    return view


_SCALAR_CTYPES = {
    "bool": ctypes.c_bool, "int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32,
    "int64": ctypes.c_int64, "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64, "float32": ctypes.c_float, "float64": ctypes.c_double,
    "float16": ctypes.c_uint16,  # its bits (runners.checked_launch converts the value)
}


def _scalar_ctype(dtype: str):
    try:
        return _SCALAR_CTYPES[dtype]
    except KeyError:
        raise TypeError(f"no C type for a scalar of type {dtype}") from None
