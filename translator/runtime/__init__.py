"""built kernels -> launches exactly like Numba's: the drop-in module and its launcher (dropin.py, launch.py:
streams, argument conversion; launch_checks.py: every launch checked as Numba's dispatcher would, with device
limits; both are also copied into packaged projects), the autotune
table beside a module (tuning.py), and the CPU runtime that runs the emitted CUDA C without a GPU
(cpurun.py with n2c_cpu.h; cpu_launch.py gives its kernels Numba's launch syntax), and the child-process
entry points that run an untrusted translation on either (cpu_worker.py, gpu_worker.py). The public names load
on first use, so a worker child importing cpu_worker does not import the translator's pipeline."""

__all__ = ["Module", "load"]


def __getattr__(name):  # PEP 562
    if name in __all__:
        from . import dropin

        return getattr(dropin, name)
    raise AttributeError(f"module 'translator.runtime' has no attribute {name!r}")
