"""translation + one case's arguments -> its outputs, on the CPU runtime or on the GPU through the drop-in."""

from __future__ import annotations

import numpy as np

from ..errors import UserError


class LaunchFailed(Exception):
    """The translation's launch failed; the message names the kernel and the configuration."""


class CpuRunner:
    """The exact emitted text, compiled with g++ against the CPU runtime; uninitialised memory poisoned."""

    device = "CPU runtime"
    poisons = True

    def __init__(self, path, cu_text, options, cu_path=None):
        from ..runtime.cpu_launch import load_cpu
        from ..runtime.cpurun import CpuBuildError

        try:
            self.module = load_cpu(path, cu_text=cu_text, options=options)
        except CpuBuildError as exc:
            raise UserError(f"{cu_path or 'the translation'}: error: does not build for the CPU runtime:\n"
                            f"{exc.output}") from None
        self.program = self.module.program

    def run(self, name, grid, block, shared, args, poison):
        from ..runtime.cpurun import CpuLaunchError, set_poison

        kernel = getattr(self.module, name)
        set_poison(kernel.lib, poison)
        try:
            kernel[grid, block, 0, shared](*args)
        except CpuLaunchError as exc:
            raise LaunchFailed(exc.message or str(exc)) from None
        except (TypeError, ValueError, OverflowError) as exc:  # refused by the launch checks, as the drop-in would
            raise LaunchFailed(str(exc)) from None
        return args


class GpuRunner:
    """The translation built with nvcc as a torch extension and launched like Numba's kernel."""

    device = "GPU"
    poisons = False  # device memory cannot be poisoned from here; the two output fills still differ

    def __init__(self, path, cu_text, options, cu_path=None):
        from ..build import BuildError
        from ..runtime.dropin import load

        try:
            self.module = load(path, specialize=options.specialize, types=options.types, kernels=options.kernels,
                               assume_nonnegative=options.assume_nonnegative, cu_text=cu_text, progress=False)
        except BuildError as exc:
            raise UserError(f"{cu_path or 'the translation'}: error: does not build with nvcc:\n{exc}") from None
        self.program = self.module.program

    def run(self, name, grid, block, shared, args, poison):
        import torch

        from ..runtime.records import from_words, is_record_array, to_torch

        # every array on the device and back, inputs too: a write to a read-only input must show
        dev = [to_torch(a, "cuda") if isinstance(a, np.ndarray) else a for a in args]
        try:
            getattr(self.module, name)[grid, block, 0, shared](*dev)
            torch.cuda.synchronize()
        except (RuntimeError, ValueError, TypeError, OverflowError) as exc:
            raise LaunchFailed(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__) from None
        return [(from_words(d.cpu().numpy(), a) if is_record_array(a) else d.cpu().numpy())
                if isinstance(d, torch.Tensor) else d for d, a in zip(dev, args)]


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
