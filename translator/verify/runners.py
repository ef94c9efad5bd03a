"""translation + one case's arguments -> its outputs, on the CPU runtime or on the GPU, in a child process.

The translation is untrusted (a model wrote it, a person edited it, a rule is wrong), so it never runs in
the verifier's process: each runner keeps one long-lived worker (translator/sandbox.py) for the whole
verify run, restarted after a death. A signal, an abort, a CUDA fault or a timeout is a LaunchFailed that
names it; the verdict and the reports go on.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import UserError
from ..lower.names import entry_name
from ..ir import typesys as T
from ..sandbox import ChildError, ChildFailed, Limits, Worker

#: Wall-clock seconds one launch of the translation may take in its worker (a case takes well under one).
CASE_SECONDS = 120.0


class LaunchFailed(Exception):
    """The translation's launch failed, faulted, died or hung; the message says which, naming the thread
    or the signal where known."""


def param_specs(fn, args) -> list[dict]:
    """The worker's description of a kernel's parameters with this case's scalar values."""
    specs = []
    for p, a in zip(fn.python_params, args):
        if isinstance(p.type, T.Array):
            specs.append({"name": p.name, "array": True, "dtype": p.type.dtype.name, "ndim": p.type.ndim,
                          "order": "F" if p.type.layout == "F" else "C"})  # the order the translation indexes
        elif len(p.params) > 1:  # a tuple or a complex number: the CPU worker passes its items as parameters
            if not isinstance(a, (tuple, list)):  # a complex number (checked_launch gives its parts already)
                a = (complex(a).real, complex(a).imag)
            values = [v.item() if isinstance(v, np.generic) else v for v in a]
            specs.append({"name": p.name, "array": False, "dtype": [q.type.name for q in p.params], "value": values,
                          "complex": isinstance(p.type, T.Scalar)})
        else:
            value = a.item() if isinstance(a, np.generic) else a
            specs.append({"name": p.name, "array": False, "dtype": p.type.name, "value": value})
    return specs


def value_specs(args) -> list[dict]:
    """param_specs of a call whose arguments are not a kernel's parameters (a ufunc's inputs and outputs)."""
    return [{"name": f"arg{i}", "array": True} if isinstance(a, np.ndarray) else
            {"name": f"arg{i}", "array": False, "value": a.item() if isinstance(a, np.generic) else a}
            for i, a in enumerate(args)]


def check_arguments(fn, args) -> None:
    """The case's arrays have the dtypes and ranks the kernel takes (else the example is wrong: exit 2)."""
    params = fn.python_params
    if len(args) != len(params):
        raise UserError(f"verify: error: example() passes {len(args)} arguments to {fn.c_name}, which takes "
                        f"{len(params)}")
    for p, a in zip(params, args):
        if isinstance(p.type, T.Array):
            want = np.dtype(p.type.dtype.name)
            if not isinstance(a, np.ndarray) or a.dtype != want or a.ndim != p.type.ndim:
                got = f"{a.dtype}[{a.ndim}-D]" if isinstance(a, np.ndarray) else type(a).__name__
                raise UserError(f"verify: error: {fn.c_name}: argument '{p.name}' must be a {p.type.ndim}-D {want} "
                                f"array, got {got}")


def death(exc: ChildFailed) -> str:
    """What killed a worker: the runtime's own fault line when it printed one, else the signal or timeout."""
    faults = [line.partition("n2c-fault: ")[2] for line in exc.output.splitlines() if "n2c-fault: " in line]
    if faults:
        return faults[-1]
    cuda = [line.strip() for line in exc.output.splitlines() if "CUDA error" in line or "cudaError" in line]
    return exc.reason + (f": {cuda[-1]}" if cuda else "")


class _WorkerRunner:
    target = ""
    program = None

    def run(self, name, grid, block, shared, args, poison, order=0):
        """The arguments after one launch of NAME: a kernel (by its entry name) or a ufunc (by its name, launched
        as example() launches it: ufunc[grid, block, stream, shared](*inputs, out); it picks its own grid)."""
        info = getattr(self.program, "ufuncs", {}).get(name)
        if info is None:
            return self.run_kernel(name, grid, block, shared, args, poison, order)
        return self.run_ufunc(info, args, poison, order)

    def run_ufunc(self, info, args, poison, order):
        """The ufunc's loop choice, broadcasting and steps done here (runtime/ufunc.py, as the drop-in does), each
        kernel launch it makes run by run_kernel in the worker."""
        from ..runtime.ufunc import NumpyBackend, UFunc

        runner = self

        class Launch:  # what UFunc launches: kernel[grid, block, stream](*args), its outputs written in place
            def __init__(self, name):
                self.name = name

            def __getitem__(self, config):
                def call(*kargs):
                    after = runner.run_kernel(self.name, config[0], config[1], 0, list(kargs), poison, order)
                    for a, b in zip(kargs, after):
                        if isinstance(a, np.ndarray) and a.flags.writeable and a is not b:
                            np.copyto(a, b)
                return call

        ufunc = UFunc(info, {loop.kernel: Launch(loop.kernel) for loop in info.loops}, NumpyBackend())
        args = [a.copy(order="K") if isinstance(a, np.ndarray) else a for a in args]
        ufunc[(1, 1, 0, 0)](*args)
        return args

    def _call(self, args: dict, arrays: list):
        try:
            return self.worker.call(self.target, args, arrays, timeout=CASE_SECONDS)
        except ChildFailed as exc:
            raise LaunchFailed(death(exc)) from None
        except ChildError as exc:
            raise LaunchFailed(f"{exc.kind}: {exc}") from None

    def close(self) -> None:
        self.worker.close()


class CpuRunner(_WorkerRunner):
    """The exact emitted text, compiled with g++ against the CPU runtime with the verifier's checks
    (runtime/n2c_cpu_check.h: every access bounds-checked, races found, thread order varied, faults
    named); uninitialised memory poisoned. Launched in a child (runtime/cpu_worker.py)."""

    device = "CPU runtime"
    poisons = True
    target = "translator.runtime.cpu_worker:run_case"

    def __init__(self, path, cu_text, options, cu_path=None):
        from ..emit.render import render_program
        from ..frontend.module import parse_file
        from ..runtime.cpurun import CHECK_FLAGS, CpuBuildError, build_cpu, gpu_only
        from ..runtime.dropin import extension_name, program_for

        self.program = program_for(parse_file(path, options.import_module, options), options,
                                   shells=cu_text is not None)
        self.text = cu_text if cu_text is not None else render_program(self.program, Path(path).name)
        why = gpu_only(self.text)
        if why:
            raise UserError(f"{path}: error: the CPU tier cannot check this translation: {why}\n"
                            "    hint: verify it on a machine with an NVIDIA GPU (numba2cuda verify --device cuda)")
        try:
            self.lib = build_cpu(self.text, name=extension_name(path) or "module", extra_flags=CHECK_FLAGS)
        except CpuBuildError as exc:
            raise UserError(f"{cu_path or 'the translation'}: error: does not build for the CPU runtime:\n"
                            f"{exc.output}") from None
        self.kernels = {entry_name(fn): fn for fn in self.program.kernels}
        self.worker = Worker(Limits(wall_seconds=CASE_SECONDS, cpu_seconds=None), name="CPU runtime worker")

    def run_kernel(self, name, grid, block, shared, args, poison, order=0):
        fn = self.kernels[name]
        grid, block, shared, args = checked_launch(fn, grid, block, shared, args)
        spec = {"lib": str(self.lib), "kernel": fn.c_name, "grid": _dims(grid), "block": _dims(block),
                "shared": int(shared), "params": param_specs(fn, args), "poison": poison, "order": order,
                "seed": 1 + order, "checks": {"memory": True, "races": True, "signals": True}}
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        result, out = self._call(spec, arrays)
        if result.get("error"):
            raise LaunchFailed(_tidy(result["error"]))
        return _put_back(args, out)


class GpuRunner(_WorkerRunner):
    """The translation built with nvcc as a torch extension and launched like Numba's kernel, in a child
    (runtime/gpu_worker.py): a kernel fault poisons the CUDA context of its process, not ours."""

    device = "GPU"
    poisons = False  # device memory cannot be poisoned from here; the two output fills still differ
    target = "translator.runtime.gpu_worker:run_case"

    def __init__(self, path, cu_text, options, cu_path=None):
        from ..frontend.module import parse_file
        from ..runtime.dropin import program_for

        self.program = program_for(parse_file(path, options.import_module, options), options,
                                   shells=cu_text is not None)
        self.kernels = {entry_name(fn): fn for fn in self.program.kernels}
        # JSON for the child: types in Numba's spelling (dropin.load parses it again), specialisations as lists
        self.load = {"path": str(path), "cu_text": cu_text,
                     "specialize": {k: list(v) for k, v in (options.specialize or {}).items()},
                     "types": ", ".join(f"{k}={v}" for k, v in (options.types or {}).items()),
                     "kernels": list(options.kernels or []), "assume_nonnegative": options.assume_nonnegative,
                     "import_module": options.import_module}
        self.worker = Worker(Limits(wall_seconds=3600, cpu_seconds=None, address_space=None), name="GPU worker")
        try:  # the build (nvcc) happens in the child too: loading the extension runs its constructors
            self.worker.call("translator.runtime.gpu_worker:prepare", self.load, timeout=3600)
        except ChildError as exc:
            raise UserError(f"{cu_path or 'the translation'}: error: does not build with nvcc:\n{exc}") from None
        except ChildFailed as exc:
            raise UserError(f"{cu_path or 'the translation'}: error: loading the built translation failed: "
                            f"{death(exc)}") from None

    def run_ufunc(self, info, args, poison, order):
        return self.run_kernel(info.name, 1, 1, 0, args, poison, order)  # the drop-in module's own ufunc

    def run_kernel(self, name, grid, block, shared, args, poison, order=0):
        fn = self.kernels.get(name)
        spec = dict(self.load, kernel=name, grid=_dims(grid), block=_dims(block), shared=int(shared),
                    params=param_specs(fn, args) if fn is not None else value_specs(args))
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        result, out = self._call(spec, arrays)
        if result.get("error"):
            if result.get("fatal"):  # the CUDA context of that worker is gone: the next case gets a fresh one
                self.worker.close()
            raise LaunchFailed(result["error"])
        return _put_back(args, out)


def checked_launch(fn, grid, block, shared, args):
    """The launch checked as the drop-in and the CPU runtime's CpuKernel check theirs (runtime/launch_checks.py):
    (grid, block, dynamic shared bytes, arguments with scalars converted); a refusal is a LaunchFailed."""
    from ..runtime import launch_checks as checks
    from ..runtime.cpu_launch import check_array, scalar_value
    from ..runtime.dropin import kernel_metadata

    name, params, _, static_shared = kernel_metadata(fn)
    try:
        gx, gy, gz, bx, by, bz, _, shared = checks.launch_config(name, (grid, block, 0, shared), checks.table_limits(),
                                                                  static_shared)
        specs = [checks.Param(*p) for p in params]
        checks.arity(name, len(specs), args)
        out = []
        for p, a in zip(specs, args):
            if p.is_array:
                check_array(name, p, a)
            else:
                if p.spread and isinstance(a, list):
                    a = _tuples(a)  # example()'s tuple (of tuples), after JSON between the processes
                a = scalar_value(name, p, a)
            out.append(a)
    except (TypeError, ValueError, OverflowError) as exc:  # refused, as the drop-in would refuse it
        raise LaunchFailed(str(exc)) from None
    return (gx, gy, gz), (bx, by, bz), shared, out


def _dims(v) -> list:
    return [int(x) for x in v] if isinstance(v, (list, tuple)) else [int(v)]


def _put_back(args, arrays) -> list:
    it = iter(arrays)
    return [next(it) if isinstance(a, np.ndarray) else a for a in args]


def _tidy(message: str) -> str:
    """The runtime prefixes "block (x,y,z): "; drop it where the message names the block itself."""
    head, sep, rest = message.partition(": ")
    return rest if sep and head.startswith("block (") and " of block (" in rest else message


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def device_shared_limit() -> int:
    """Shared memory a block gets without opting in, on GPU 0 (what the Numba original can use)."""
    import torch

    return int(torch.cuda.get_device_properties(0).shared_memory_per_block)


def _tuples(value):
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value
