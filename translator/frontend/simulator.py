"""Where numba-cuda's CUDA simulator departs from the GPU in ways that stop a module or a test before the launch
the import mode waits for (frontend/probe.py runs the user's code under the simulator). Each patch makes the
simulator do what the GPU target does; none changes what a kernel computes."""
from __future__ import annotations

import contextlib
import types

NEWER_SETTINGS = {"CUDA_NVRTC_EXTRA_SEARCH_PATHS": ""}


def patch_simulator() -> None:
    _names_the_gpu_target_has()
    _closures_see_the_simulated_module()
    _rng_states_made_in_nopython_mode()


def _names_the_gpu_target_has() -> None:
    """Names numba-cuda's GPU target has and its simulator lacks, which modules import at their top level
    (`from numba.cuda.cudadrv.devicearray import DeviceNDArray`, for isinstance tests and annotations): the
    simulator's own class stands for it, so the module imports as it does on a GPU. Its device has no name,
    which modules read to choose settings per GPU (`"A100" in cuda.gpus[0]._device.name`): it gets one that
    names no GPU, as Numba's does, in bytes. Settings newer numba-cuda releases read, which tests set with
    override_config (numba-cuda's FFI example sets CUDA_NVRTC_EXTRA_SEARCH_PATHS), exist with their defaults."""
    from numba.cuda import config
    from numba.cuda.simulator.cudadrv import devicearray, devices

    if not hasattr(devicearray, "DeviceNDArray"):
        devicearray.DeviceNDArray = devicearray.FakeCUDAArray
    if not hasattr(devices.FakeCUDADevice, "name"):
        devices.FakeCUDADevice.name = b"CUDA simulator (numba2cuda --import-module)"
    for name, default in NEWER_SETTINGS.items():
        if not hasattr(config, name):
            setattr(config, name, default)


def _closures_see_the_simulated_module() -> None:
    """The simulator runs a kernel with the `cuda` of its globals swapped for one that knows the thread's
    index; a kernel defined in a function that imports cuda itself (numba-cuda's documentation style) reads
    cuda from a closure cell, which it leaves alone, so `cuda.grid(1)` fails there ("module 'numba.cuda' has
    no attribute 'grid'") and the launch after it is never reached. Cells holding numba.cuda are swapped too,
    and only those holding it on entry are put back, so a device function sharing the kernel's cell leaves it
    swapped for the threads still running."""
    from numba import cuda
    from numba.cuda.simulator import kernel as simulated

    globals_only = simulated.swapped_cuda_module

    @contextlib.contextmanager
    def swapped(fn, fake):
        cells = [c for c in (getattr(fn, "__closure__", None) or ()) if _holds(c, cuda)]
        for cell in cells:
            cell.cell_contents = fake
        try:
            with globals_only(fn, fake):
                yield
        finally:
            for cell in cells:
                cell.cell_contents = cuda
    simulated.swapped_cuda_module = swapped


def _holds(cell, value) -> bool:
    try:
        return cell.cell_contents is value
    except ValueError:  # a cell not yet bound
        return False


def _rng_states_made_in_nopython_mode() -> None:
    """create_xoroshiro128p_states under the simulator makes its states in Numba's object mode, a jump of 2**64
    steps per state: a million states (numba-cuda's Monte Carlo example) take minutes, past the import mode's
    time limit. The same functions compiled in nopython mode, as on the GPU target, give the same states in a
    second."""
    from numba import njit
    from numba.cuda import random

    names = ("rotl", "init_xoroshiro128p_state", "xoroshiro128p_next", "xoroshiro128p_jump",
             "init_xoroshiro128p_states_cpu")
    scope = dict(vars(random))
    for name in names:
        function = getattr(getattr(random, name, None), "py_func", None)
        if function is None:  # another numba-cuda: left as it is
            return
        scope[name] = njit(types.FunctionType(function.__code__, scope, name, function.__defaults__))
    random.init_xoroshiro128p_states_cpu = scope["init_xoroshiro128p_states_cpu"]
