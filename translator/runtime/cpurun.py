"""Compile emitted CUDA C for the CPU runtime (``runtime/n2c_cpu.h``) and launch it via ctypes.

This is the CPU tier of the equivalence checker: the *exact* ``.cu`` text the translator emits
is compiled by g++ with the runtime header force-included, and its ``extern "C" <name>_launch``
wrapper is called like the real one (grid, block, dynamic shared bytes, stream, kernel args).
Launches are synchronous; a deadlock, divergent barrier, mismatched warp collective or
``__trap()`` surfaces as :class:`CpuLaunchError` carrying the runtime's explanation.

Builds are cached by content (source, header, flags, compiler version) under
``$NUMBA2CUDA_CACHE`` or ``~/.cache/numba2cuda/cpu`` and published atomically, so concurrent
processes never load a half-written library.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..confine import confine, requested
from ..sandbox import ChildFailed, Limits, run_command

__all__ = [
    "CHECK_FLAGS",
    "HEADER",
    "CpuBuildError",
    "CpuLaunchError",
    "Dim3",
    "build_cpu",
    "compile_cpu",
    "load_library",
    "launch",
    "set_poison",
    "static_poison_supported",
]

HEADER = Path(__file__).resolve().parent / "n2c_cpu.h"
# stand-ins for CUDA headers a translation includes (<cooperative_groups.h>); n2c_cpu.h defines what they declare
CPU_INCLUDE = HEADER.parent / "cpu_include"
# n2c_cpu.h includes it in checked builds; part of every build's cache key
CHECK_HEADER = HEADER.with_name("n2c_cpu_check.h")

# -fno-strict-aliasing: CUDA code reinterprets the shared byte buffer as float* etc.
# -fwrapv: integer overflow wraps as on the GPU instead of being optimised as UB.
# -ffp-contract=off: no a*b+c fusion, so float results match an unfused reference bit for bit.
# -fno-ipa-reference-addressable: otherwise a __shared__ array that is never stored to is
# "known" to hold zeros and its loads are folded away, so its poison could never be seen.
# -fno-gnu-unique / -Bsymbolic: each .so keeps its own __shared__ statics and runtime even when
# many kernels' libraries are loaded into one process.
# -U_FORTIFY_SOURCE: Ubuntu's g++ defines it; the runtime poisons the whole TLS block through a
# pointer into one object of it, which a fortified memset takes for an overflow (and aborts).
# -fmax-errors: a translation a model wrote may provoke errors without end; twenty say what is wrong.
CXXFLAGS = (
    "-std=c++17", "-O1", "-fPIC", "-shared", "-fno-strict-aliasing", "-fwrapv",
    "-ffp-contract=off", "-fno-ipa-reference-addressable", "-fno-gnu-unique", "-Wl,-Bsymbolic",
    "-U_FORTIFY_SOURCE", "-fmax-errors=20",
)
#: g++ runs in a sandboxed child (no secrets in its environment, killed past these); callers compiling text a
#: model wrote pass tighter ones (the LLM backend's time budget)
BUILD_LIMITS = Limits(wall_seconds=600, cpu_seconds=600, address_space=16 << 30, file_size=1 << 30)
# The build `numba2cuda verify` runs (n2c_cpu_check.h): g++ calls __tsan_readN/__tsan_writeN, which the
# runtime defines, before every memory access of the kernel code. Compiled and linked in two steps, so the
# driver links no sanitizer library; -z defs: a hook the runtime lacks fails the build, not the launch.
# -O0: half the compile time of -O1 (verify builds every translation it checks, mutants in the tests included);
# SSE arithmetic without contraction gives the same bits at any level.
CHECK_FLAGS = ("-DN2C_CPU_CHECKED", "-fsanitize=thread", "-O0")
_ERROR_CHARS = 6000
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class CpuBuildError(RuntimeError):
    """g++ rejected the emitted source; ``output`` is the trimmed compiler output."""

    def __init__(self, name: str, output: str):
        super().__init__(f"CPU build of {name!r} failed:\n{output}")
        self.name = name
        self.output = output


class CpuLaunchError(RuntimeError):
    """The launch returned a nonzero cudaError_t; ``message`` is the runtime's explanation."""

    def __init__(self, name: str, code: int, message: str):
        super().__init__(f"{name}: cudaError {code}: {message}")
        self.name = name
        self.code = code
        self.message = message


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


def _cache_root(cache_dir: str | os.PathLike | None) -> Path:
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get("NUMBA2CUDA_CACHE")
    base = Path(env) if env else Path.home() / ".cache" / "numba2cuda"
    return base / "cpu"


@lru_cache(maxsize=None)
def _compiler_id(cxx: str) -> str:
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise CpuBuildError("<compiler>", f"cannot run {cxx!r}: {exc}") from None
    return out.splitlines()[0] if out else cxx


def _trim(output: str, build_dir: Path, src_name: str) -> str:
    """Make g++ output point at the .cu by its own name and keep it readable."""
    text = output.replace(str(build_dir) + os.sep, "").replace(str(HEADER), "n2c_cpu.h").strip()
    if len(text) > _ERROR_CHARS:
        text = text[:_ERROR_CHARS] + f"\n... ({len(text) - _ERROR_CHARS} more characters)"
    return text or f"g++ failed on {src_name} without output"


def compile_cpu(
    cu_text: str,
    *,
    name: str,
    cache_dir: str | os.PathLike | None = None,
    extra_flags: Sequence[str] = (),
) -> ctypes.CDLL:
    """Compile ``cu_text`` against the CPU runtime and load it; cached by content.

    ``name`` names the files (``<name>.cu`` shows up in compiler errors) and is usually the
    kernel name. ``extra_flags`` go to g++ after the defaults (e.g. ``-DN2C_CPU_UCONTEXT``).
    """
    return load_library(build_cpu(cu_text, name=name, cache_dir=cache_dir, extra_flags=extra_flags))


def _flags(extra_flags: Sequence[str]) -> list[str]:
    # cpu_include/ holds the runtime's stand-ins for CUDA headers (cuda_fp16.h) that kernels include by name
    return [*CXXFLAGS, "-I", str(CPU_INCLUDE), *extra_flags]


def library_path(cu_text: str, *, name: str, cache_dir=None, extra_flags: Sequence[str] = ()) -> Path:
    """Where build_cpu puts the library of ``cu_text`` (content-addressed: source, headers, flags, compiler)."""
    if not _NAME_RE.match(name):
        raise ValueError(f"name must be a C identifier, got {name!r}")
    cxx = os.environ.get("CXX", "g++")
    header = HEADER.read_bytes() + CHECK_HEADER.read_bytes() + \
        b"".join(p.read_bytes() for p in sorted(CPU_INCLUDE.glob("*.h")))
    digest = hashlib.sha256()
    for part in (cu_text.encode(), header, "\0".join(_flags(extra_flags)).encode(), _compiler_id(cxx).encode()):
        digest.update(hashlib.sha256(part).digest())
    return _cache_root(cache_dir) / f"{name}-{digest.hexdigest()[:24]}" / f"lib{name}.so"


def gpu_only(cu_text: str) -> str | None:
    """Why CU_TEXT runs on a GPU only (a CUDA header the CPU runtime has no stand-in for), or None."""
    if "#include <cuda_fp8.h>" in cu_text:
        return ("it uses FP8 values (numba.cuda._internal.cuda_fp8, CUDA's cuda_fp8.h), which the CPU runtime does "
                "not stand in for (nor does Numba's CUDA simulator)")
    return None


def build_cpu(
    cu_text: str,
    *,
    name: str,
    cache_dir: str | os.PathLike | None = None,
    extra_flags: Sequence[str] = (),
    limits: Limits = BUILD_LIMITS,
) -> Path:
    """Compile ``cu_text`` against the CPU runtime (g++ in a sandboxed child under ``limits``) without loading
    it; the library's path. A compiler that fails, dies or outlasts its limits raises CpuBuildError."""
    lib_path = library_path(cu_text, name=name, cache_dir=cache_dir, extra_flags=extra_flags)
    if lib_path.exists():
        return lib_path
    final, root = lib_path.parent, lib_path.parent.parent
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
    try:
        src = tmp / f"{name}.cu"
        src.write_text(cu_text)
        cxx = os.environ.get("CXX", "g++")
        flags = _flags(extra_flags)
        cmd = [cxx, *flags, "-x", "c++", "-include", str(HEADER), src.name, "-o", lib_path.name]
        steps = [cmd]
        if "-fsanitize=thread" in flags:
            link = [f for f in flags if f in ("-shared", "-fPIC") or f.startswith("-Wl,")]
            compile_step = [f for f in cmd if f != "-shared" and not f.startswith("-Wl,")]
            compile_step = compile_step[:compile_step.index("-o")] + ["-c", "-o", "kernel.o"]
            steps = [compile_step, [cxx, *link, "-Wl,-z,defs", "kernel.o", "-o", lib_path.name]]
        log = []
        for step in steps:
            try:  # a sandboxed child: a hand-edited or model-written file can make g++ hang (#include "/dev/zero")
                proc = run_command(step, limits=limits, cwd=tmp)
            except ChildFailed as exc:
                raise CpuBuildError(name, _trim(f"{exc.reason}\n{exc.output}", tmp, src.name)) from None
            if proc.returncode != 0:
                from ..sandbox import describe_exit

                why = "" if proc.returncode > 0 else f"g++ was {describe_exit(proc.returncode)}\n"
                raise CpuBuildError(name, _trim(why + proc.stdout, tmp, src.name))
            log.append(" ".join(step) + "\n" + proc.stdout)
        (tmp / "build.log").write_text("\n".join(log))
        try:
            os.replace(tmp, final)  # the directory appears complete or not at all
        except OSError:
            if not lib_path.exists():  # not a lost race with an identical build
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return lib_path


def load_library(lib_path: str | os.PathLike) -> ctypes.CDLL:
    """Load a library build_cpu made into this process (only a child process loads an untrusted translation's:
    loading runs its static constructors). Where NUMBA2CUDA_CONFINE=1 (a sandboxed child loading a model's
    code), the process is confined first (confine.py): what the library runs cannot start programs, write files
    or signal other processes (where the platform allows: elsewhere the sandbox's other layers stand)."""
    if requested():
        confine()
    lib = ctypes.CDLL(str(lib_path))
    lib.n2c_cpu_last_error_message.restype = ctypes.c_char_p
    lib.n2c_cpu_last_error_message.argtypes = []
    lib.n2c_cpu_set_poison.restype = None
    lib.n2c_cpu_set_poison.argtypes = [ctypes.c_int]
    lib.n2c_cpu_static_poison_supported.restype = ctypes.c_int
    lib.n2c_cpu_static_poison_supported.argtypes = []
    return lib


def _dim3(v: Any) -> Dim3:
    t = (int(v),) if isinstance(v, (int, np.integer)) else tuple(int(x) for x in v)
    if not 1 <= len(t) <= 3 or any(x < 0 or x >= 2**32 for x in t):
        raise ValueError(f"bad launch dimension {v!r}")
    return Dim3(*(t + (1,) * (3 - len(t))))


_NP_CTYPES = {
    np.dtype(np.int8): ctypes.c_int8, np.dtype(np.uint8): ctypes.c_uint8,
    np.dtype(np.int16): ctypes.c_int16, np.dtype(np.uint16): ctypes.c_uint16,
    np.dtype(np.int32): ctypes.c_int32, np.dtype(np.uint32): ctypes.c_uint32,
    np.dtype(np.int64): ctypes.c_int64, np.dtype(np.uint64): ctypes.c_uint64,
    np.dtype(np.float32): ctypes.c_float, np.dtype(np.float64): ctypes.c_double,
    np.dtype(np.bool_): ctypes.c_bool,
}


def _convert(i: int, arg: Any, ctype: Any) -> tuple[Any, Any]:
    """(ctypes type, value) for one kernel argument."""
    if isinstance(arg, np.ndarray):
        if not (arg.flags.c_contiguous or arg.flags.f_contiguous):  # the launch checked the order its type asks
            raise ValueError(f"argument {i}: array must be contiguous (the kernel gets a bare pointer)")
        if ctype not in (None, ctypes.c_void_p) and not (
            isinstance(ctype, type) and issubclass(ctype, ctypes._Pointer)
        ):
            raise TypeError(f"argument {i}: an array passes as a pointer, not {ctype!r}")
        return ctypes.c_void_p, ctypes.c_void_p(arg.ctypes.data)
    if ctype is None:
        if isinstance(arg, np.generic) and arg.dtype in _NP_CTYPES:
            ctype = _NP_CTYPES[arg.dtype]
        elif arg is None:
            return ctypes.c_void_p, None
        else:
            raise TypeError(
                f"argument {i}: {type(arg).__name__} {arg!r} needs an explicit ctypes type in "
                "argtypes (int vs int64, float vs double matter)")
    if isinstance(arg, np.generic):
        arg = arg.item()
    return ctype, ctype(arg)


def launch(
    lib: ctypes.CDLL,
    name: str,
    grid: Any,
    block: Any,
    shared_bytes: int,
    *args: Any,
    argtypes: Sequence[Any] | None = None,
    stream: int | None = None,
) -> int:
    """Call ``<name>_launch(grid, block, shared_bytes, stream, *args)``; run the grid to the end.

    NumPy arrays pass as pointers to their data (C-contiguous only). Scalars are converted by
    the matching entry of ``argtypes`` (a ctypes type; ``None`` for arrays, or for NumPy
    scalars whose dtype says it). Returns 0; a nonzero cudaError_t raises CpuLaunchError.
    """
    if argtypes is None:
        argtypes = [None] * len(args)
    if len(argtypes) != len(args):
        raise ValueError(f"{len(args)} arguments but {len(argtypes)} argtypes")
    converted = [_convert(i, a, t) for i, (a, t) in enumerate(zip(args, argtypes))]
    fn = lib[f"{name}_launch"]  # a fresh function object: argtypes are not shared between calls
    fn.restype = ctypes.c_int
    fn.argtypes = [Dim3, Dim3, ctypes.c_size_t, ctypes.c_void_p] + [t for t, _ in converted]
    rc = fn(_dim3(grid), _dim3(block), int(shared_bytes), stream, *[v for _, v in converted])
    if rc != 0:
        get_msg = lib.n2c_cpu_last_error_message
        get_msg.restype = ctypes.c_char_p  # also for libraries not loaded by compile_cpu
        msg = get_msg()
        raise CpuLaunchError(name, rc, msg.decode(errors="replace") if msg else "")
    return rc


def set_poison(lib: ctypes.CDLL, byte: int | None) -> None:
    """Fill byte for uninitialised shared memory and stacks (default 0xFF); None disables.

    Running a kernel under two different poison bytes and requiring identical output catches
    reads of uninitialised shared memory.
    """
    lib.n2c_cpu_set_poison(-1 if byte is None else int(byte) & 0xFF)


def static_poison_supported(lib: ctypes.CDLL) -> bool:
    """Whether static ``__shared__`` arrays (not just the dynamic buffer) get poisoned."""
    return bool(lib.n2c_cpu_static_poison_supported())
