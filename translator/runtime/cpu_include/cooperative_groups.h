// Stands in for CUDA's <cooperative_groups.h> when the CPU runtime compiles a translation: n2c_cpu.h
// (force-included first) already defines cooperative_groups::this_grid() and grid_group::sync().
#ifndef N2C_CPU_RUNTIME
#error "this header is only for the numba2cuda CPU runtime (n2c_cpu.h)"
#endif
