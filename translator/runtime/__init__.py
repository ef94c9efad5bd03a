"""built kernels -> launches exactly like Numba's: the drop-in module and its launcher (dropin.py, launch.py:
streams, argument conversion; launch_checks.py: every launch checked as Numba's dispatcher would, with device
limits; both are also copied into packaged projects), the autotune
table beside a module (tuning.py), and the CPU runtime that runs the emitted CUDA C without a GPU
(cpurun.py with n2c_cpu.h; cpu_launch.py gives its kernels Numba's launch syntax)."""

from .dropin import Module, load

__all__ = ["Module", "load"]
