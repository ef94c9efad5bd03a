"""A @vectorize / @guvectorize(target="cuda") function -> one elementwise kernel per signature, as Numba builds them.

Numba's CUDA ufunc is the decorated function compiled as a device function, called by a generated kernel
with one thread per element (vectorize) or per outer index (guvectorize: each argument indexed by the
thread, its core dimensions passed whole). The kernels here are those, built as KernelIR and typed like any
kernel. A vectorize kernel takes each input with a step (1, or 0 for a value broadcast to every element)
so scalars need no copy; runtime/ufunc.py chooses the loop, broadcasts and launches as Numba's ufunc does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..analysis import specialize
from ..analysis.calls import device_calls
from ..analysis.typer import Typer
from ..errors import Unsupported, UserError
from ..frontend.info import FunctionInfo
from ..ir import nodes as ir
from ..ir import typesys as T
from ..ir.facts import mark_written


@dataclass
class UfuncLoop:
    kernel: str  # C name of the generated kernel
    inputs: tuple  # NumPy dtype names of the inputs
    outputs: tuple  # ... of the outputs


@dataclass
class UfuncInfo:
    name: str
    kind: str  # "vectorize" | "guvectorize"
    nin: int
    loops: list = field(default_factory=list)
    core_inputs: list = field(default_factory=list)  # guvectorize: core dimension names per argument
    core_outputs: list = field(default_factory=list)
    scalar_args: list = field(default_factory=list)  # guvectorize: arguments typed as scalars


def _builtin(name, axis):
    return ir.Builtin(f"{name}.{axis}", T.INT32, T.UINT32)


def _stmt(s, node):
    s.node = node
    return s


def _unique(name, taken):
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def build_ufunc_kernels(program, fi: FunctionInfo) -> UfuncInfo:
    """Type and legalize the kernels of one ufunc; they join program.kernels."""
    spec = fi.ufunc
    nin = len(fi.params) - len(spec.outputs) if spec.kind == "guvectorize" else len(fi.params)
    info = UfuncInfo(fi.name, spec.kind, nin, core_inputs=spec.inputs, core_outputs=spec.outputs)
    seen = set()
    for ret, params in spec.signatures:
        key = tuple(map(str, params))
        if key in seen:
            continue
        seen.add(key)
        fn = vectorize_kernel(fi, ret, params) if spec.kind == "vectorize" else gufunc_kernel(fi, params)
        _type(program, fn)
        if spec.kind == "vectorize":
            info.loops.append(UfuncLoop(fn.c_name, tuple(t.name for t in params), (ret.name,)))
        else:
            dtypes = [p.dtype.name if isinstance(p, T.Array) else p.name for p in params]
            info.loops.append(UfuncLoop(fn.c_name, tuple(dtypes[:nin]), tuple(dtypes[nin:])))
            info.scalar_args = [not isinstance(p, T.Array) for p in params]
        program.kernels.append(fn)
    return info


def _type(program, fn):
    reporter = program.info.reporter
    known = len(reporter.diagnostics)
    try:
        Typer(fn, program, reporter).run()
    except Unsupported as exc:
        reporter.add_unsupported(exc)
    if len(reporter.diagnostics) > known:
        raise UserError(reporter.diagnostics)
    for call in device_calls(fn.body):  # outputs the core function writes are written by the kernel
        for arg, param in zip(call.args, call.target.params):
            if isinstance(arg, ir.ArrayRef) and param.array is not None and param.array.written:
                mark_written(arg.array)
    program.legalize(fn)
    specialize.plan(fn, {"*": ()})


def _kernel(fi, suffix, params, body, arrays):
    fn = ir.Function(f"{fi.name}_{suffix}", True, params, body, node=fi.node)
    fn.c_name = fn.name
    fn.arrays = arrays
    fn.helpers = set()
    fn.cooperative = False
    fn.ufunc_of = fi.name
    return fn


def _array_param(name, dtype, ndim):
    arr = ir.ArrayVar(name, dtype, [None] * ndim, "param")
    return ir.Param(name, T.Array(dtype, ndim), arr), arr


def vectorize_kernel(fi: FunctionInfo, ret, types) -> ir.Function:
    """out[i] = f(x[i * x_step], y[i * y_step], ...) over i < out.shape[0]."""
    taken = set(fi.params)
    params, arrays, args = [], [], []
    tid = _unique("tid", taken)
    for name, t in zip(fi.params, types):
        p, arr = _array_param(name, t, 1)
        step = ir.Param(_unique(f"{name}_step", taken), T.INT64)
        params += [p, step]
        arrays.append(arr)
        args.append(ir.Load(arr, [ir.BinOp("*", ir.Name(tid), ir.Name(step.name))]))
    out_param, out = _array_param(_unique("out", taken), ret, 1)
    out.written = True
    params.append(out_param)
    arrays.append(out)
    index = ir.BinOp("+", ir.BinOp("*", _builtin("blockIdx", "x"), _builtin("blockDim", "x")), _builtin("threadIdx", "x"))
    call = ir.DeviceCall(fi.name, args, key=fi.key)
    body = [_stmt(ir.Assign(target=ir.Name(tid), value=index), fi.node),
            _stmt(ir.If(cond=ir.Compare("<", ir.Name(tid), ir.ShapeOf(out, 0)),
                        body=[_stmt(ir.Store(target=ir.Load(out, [ir.Name(tid)]), value=call), fi.node)]), fi.node)]
    return _kernel(fi, "_".join(t.name for t in types), params, body, arrays)


def gufunc_kernel(fi: FunctionInfo, types) -> ir.Function:
    """f(a[i, ...], b[i], out[i, ...]) over i below every argument's first extent (Numba's gufunc kernel)."""
    spec = fi.ufunc
    taken = set(fi.params)
    tid = _unique("tid", taken)
    params, arrays, args, bounds = [], [], [], []
    for name, t, dims in zip(fi.params, types, spec.inputs + spec.outputs):
        core = len(dims)
        dtype = t.dtype if isinstance(t, T.Array) else t
        p, arr = _array_param(name, dtype, core + 1 if isinstance(t, T.Array) and core else 1)
        params.append(p)
        arrays.append(arr)
        bounds.append(ir.Compare("<", ir.Name(tid), ir.ShapeOf(arr, 0)))
        if not isinstance(t, T.Array):
            args.append(ir.Load(arr, [ir.Name(tid)]))
            continue
        if core:  # a[i, :, ...]: the row of the core dimensions
            stride = None
            for k in range(1, arr.ndim):
                stride = ir.ShapeOf(arr, k) if stride is None else ir.BinOp("*", stride, ir.ShapeOf(arr, k))
            shape = [ir.ShapeOf(arr, k) for k in range(1, arr.ndim)]
            view = ir.ArrayVar("", dtype, shape, "view", base=arr, offset=ir.BinOp("*", ir.Name(tid), stride))
        else:  # a[i:i + 1]: Numba's one-element array for a () core typed as an array
            view = ir.ArrayVar("", dtype, [ir.Const(1, T.INT64)], "view", base=arr, offset=ir.Name(tid))
        args.append(ir.ArrayRef(view))
    index = ir.BinOp("+", ir.BinOp("*", _builtin("blockIdx", "x"), _builtin("blockDim", "x")), _builtin("threadIdx", "x"))
    cond = bounds[0] if len(bounds) == 1 else ir.BoolOp("and", bounds)
    body = [_stmt(ir.Assign(target=ir.Name(tid), value=index), fi.node),
            _stmt(ir.If(cond=cond, body=[_stmt(ir.ExprStmt(value=ir.DeviceCall(fi.name, args, key=fi.key)), fi.node)]), fi.node)]
    suffix = "_".join((t.dtype.name if isinstance(t, T.Array) else t.name) for t in types)
    return _kernel(fi, suffix, params, body, arrays)
