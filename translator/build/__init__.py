"""kernel .cu + binding .cpp -> importable torch extension: found in a content-addressed cache or compiled
(nvcc and the host compiler in parallel, through ninja) and published atomically under a lock.

toolchain.py (compilers, architectures, flags) -> plan.py (cache key and paths) -> compile.py (the
compiler steps) -> cache.py (lock, publication, import)."""

from .cache import STATS, build_extension
from .plan import BUILD_FORMAT, BuildPlan, cache_root, plan_extension
from .toolchain import DEFAULT_ARCH, BuildError, cuda_home

__all__ = ["BUILD_FORMAT", "BuildError", "BuildPlan", "DEFAULT_ARCH", "STATS", "build_extension", "cache_root",
           "cuda_home", "plan_extension"]
