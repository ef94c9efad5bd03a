"""Program -> torch binding .cpp: one function per kernel that checks its tensors and calls the kernel's launcher."""

from __future__ import annotations

from ..version import __version__
from ..ir import typesys as T
from .codegen import c_type
from .render import environment, is_cooperative, python_signature

AT_TYPES = {
    "bool": "at::kBool", "int8": "at::kChar", "int16": "at::kShort", "int32": "at::kInt", "int64": "at::kLong",
    "uint8": "at::kByte", "uint16": "at::kUInt16", "uint32": "at::kUInt32", "uint64": "at::kUInt64",
    "float16": "at::kHalf", "float32": "at::kFloat", "float64": "at::kDouble", "complex64": "at::kComplexFloat",
    "complex128": "at::kComplexDouble",
}


def _binding_scalar(t: T.Scalar) -> str:
    if t.kind == "b":
        return "bool"
    return "double" if t.is_float else "int64_t"


def kernel_context(fn) -> dict:
    launcher_types, params, checks, call_args, device_checks = [], [], [], [], []
    arrays = [p for p in fn.params if p.array is not None]
    for p in fn.params:
        if p.array is not None:
            ct = c_type(p.type.dtype)
            launcher_types += [f"{ct} *"] + ["int64_t"] * p.type.ndim
            params.append(f"const at::Tensor &{p.name}")
            if p.type.dtype.kind == "r":  # records (RNG states) arrive as uint64 words, one more dimension
                checks.append(f'check_records("{fn.c_name}", "{p.name}", {p.name}, {p.type.ndim}, '
                              f'{p.type.dtype.bits // 64});')
            else:
                checks.append(f'check_array("{fn.c_name}", "{p.name}", {p.name}, {AT_TYPES[p.type.dtype.name]}, '
                              f'{p.type.ndim});')
            if p is arrays[0]:
                device_checks.append(f'check_on_gpu("{fn.c_name}", "{p.name}", {p.name});')
            else:
                device_checks.append(f'check_same_device("{fn.c_name}", "{p.name}", {p.name}, '
                                     f'{arrays[0].name}.device());')
            call_args += [f"static_cast<{ct} *>({p.name}.data_ptr())"] + \
                [f"{p.name}.size({d})" for d in range(p.type.ndim)]
        else:
            launcher_types.append(c_type(p.type))
            params.append(f"{_binding_scalar(p.type)} {p.name}")
            call_args.append(f"static_cast<{c_type(p.type)}>({p.name})")
    checks += device_checks  # every type problem is named before a device problem
    for name in sorted(fn.assumptions):
        checks.append(f'TORCH_CHECK({name} >= 0, "{fn.c_name}(): {name} must be >= 0, got ", {name}, '
                      f'" (the translation assumes it; translate with --no-assume-nonnegative to allow negatives)");')
    return dict(name=fn.c_name, launcher_types=", ".join(launcher_types), binding_params=", ".join(params),
                cooperative=is_cooperative(fn),
                checks=checks, call_args=", ".join(call_args), python_signature=python_signature(fn),
                first_array=arrays[0].name if arrays else "")


def render_bindings(program, source_name: str) -> str:
    kernels = [kernel_context(fn) for fn in program.kernels]
    records = sorted({c_type(p.type.dtype).split("::")[-1] for fn in program.kernels for p in fn.params
                      if p.array is not None and c_type(p.type.dtype).startswith("n2c::")})
    fp16 = any(T.FLOAT16 in (p.type, getattr(p.type, "dtype", None)) for fn in program.kernels for p in fn.params)
    return environment().get_template("bindings.cpp.j2").render(records=records, fp16=fp16,
        version=__version__, source_name=source_name, kernels=kernels)
