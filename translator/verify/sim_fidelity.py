"""Numba's CUDA simulator -> a reference that computes what Numba computes on the GPU.

Loaded by reference.py (by path; it imports nothing from numba2cuda) after the user's module, in the
process that runs it under NUMBA_ENABLE_CUDASIM=1. Where the simulator departs from Numba on the GPU, and
what is done about it (README "Where the simulator is not Numba" lists the same):

  divergence                                          treatment
  NumPy 2 promotion (NEP 50): python_float *          every operator, comparison and augmented assignment
    np.float32(x) is float32; Python ints weak        of each kernel and device function is rewritten into
  int8/int16/int32 arithmetic wraps in its width      a call typed by Numba's own typing (sim_numba.py)
  integer // and % by zero raise or warn              Numba's NumPy error model: 0 (MIN // -1: 0)
  math.* of float32 returns a Python float; floor,    `math` is replaced by calls typed by numba-cuda's own
    ceil and trunc ints (numba.core's CPU typing too)   declarations (numba.cuda.cudamath) and computed by the
                                                      C library in the operands' precision
  range() of a float (math.ceil's there) raises       int() toward zero, as Numba converts it
  min/max/abs/round/pow pick or promote as Python     typed by Numba (max(int32, float32) is float64)
  float ** int                                        repeated squaring, as Numba
  complex ** 2 (small integers): NumPy multiplies     numba-cuda's cpow, step by step with the C library
  cuda.fma computes a*b+c rounded twice; cuda.cbrt    fmaf/fma and cbrtf/cbrt from the C library
  is a ** (1/3)
  cuda.atomic.* add a value of another type, then     the value is converted to the array's type first
  round the result
  no warp collectives (shfl_*_sync, votes, syncwarp)  implemented: a rendezvous of the warp's live lanes
  `numba.cuda.grid(...)` after `import numba`,        numba.cuda forwards every kernel API name to the
  `from numba.cuda import grid`: not in the module    launch's simulated cuda module
  cuda.shared.array(0, dtype=np.float32): NumPy       dtypes given as NumPy scalar classes or strings are
  scalar classes have no .itemsize there              read as np.dtype
  a loop on redrawn inputs may not end                a deadline checked at the top of every loop body
  np.sum(a), a.mean() ...: NumPy sums floats          numba-cuda's: element by element in C order, in its
    pairwise                                          accumulator type (sim_reduce.py)
  a None (a may-be-None result) stored into a float   Numba's cast raises, which on the GPU ends only that
    array is NaN; in arithmetic it fails the launch   thread: the reference's thread ends there (ThreadStops)

Out of reach (verify reports the case undecided or notes it): bounds (the simulator raises IndexError
where the GPU reads or writes out of bounds: undefined behaviour in the original), the typing of a local
whose type Numba unifies across a loop (float32 then float64: computed per assignment here), races in
the original (Python threads under the GIL rarely interleave), FMA contraction by NVVM on the GPU.
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
import threading
import time
import warnings

import numpy as np

HELPERS = "__n2c_sim"  # the name the rewritten code calls its helpers by


class OriginalTimeout(Exception):
    """The original did not finish within the deadline (on redrawn inputs a loop may run ~forever)."""


class _Helpers:
    def __init__(self, ops):
        self.un, self.chain, self.is_ = ops.unop, ops.chain, ops.is_  # a None operand ends the thread (ThreadStops)
        self.reduce = ops.NUMPY.method
        self.stops = ops.ThreadStops
        for i, fn in enumerate(ops.BIN):
            setattr(self, f"b{i}", fn)
        for i, fn in enumerate(ops.CMP):
            setattr(self, f"c{i}", fn)
        self.deadline = None

    def stored(self, value):
        """`out[i] = v` of a may-be-None v: Numba's cast of a None raises, and the thread ends."""
        if value is None:
            raise self.stops("a None stored into an array")
        return value

    def tick(self):
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise OriginalTimeout("the original did not finish in time")


_BIN = {ast.Add: 0, ast.Sub: 1, ast.Mult: 2, ast.Div: 3, ast.FloorDiv: 4, ast.Mod: 5, ast.Pow: 6, ast.LShift: 7,
        ast.RShift: 8, ast.BitAnd: 9, ast.BitOr: 10, ast.BitXor: 11}
_CMP = {ast.Lt: 0, ast.LtE: 1, ast.Gt: 2, ast.GtE: 3, ast.Eq: 4, ast.NotEq: 5}
_UN = {ast.USub: 0, ast.UAdd: 1, ast.Invert: 2}
_REDUCTION_METHODS = {"sum", "prod", "mean", "var", "std", "min", "max", "all", "any"}


def _helper(attr: str, node) -> ast.Attribute:
    return ast.Attribute(ast.Name(HELPERS, ast.Load()), attr, ast.Load())


class _Rewrite(ast.NodeTransformer):
    """Operators -> typed helper calls; a deadline check at the top of every loop body."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if type(node.op) not in _BIN:
            return node
        return ast.copy_location(ast.Call(_helper(f"b{_BIN[type(node.op)]}", node), [node.left, node.right], []),
                                 node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if type(node.op) not in _UN:
            return node
        return ast.copy_location(ast.Call(_helper("un", node), [ast.Constant(_UN[type(node.op)]), node.operand], []),
                                 node)

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)):
            test = ast.Call(_helper("is_", node), [node.left, node.comparators[0]], [])
            return ast.copy_location(test if isinstance(node.ops[0], ast.Is) else ast.UnaryOp(ast.Not(), test), node)
        if any(type(op) not in _CMP for op in node.ops):
            return node
        if len(node.ops) == 1:
            return ast.copy_location(ast.Call(_helper(f"c{_CMP[type(node.ops[0])]}", node),
                                              [node.left, node.comparators[0]], []), node)
        if all(_simple(c) for c in [node.left, *node.comparators[:-1]]):
            # a < b < c with plain names and constants: each operand may be read twice, never run twice
            operands = [node.left, *node.comparators]
            pairs = [ast.Call(_helper(f"c{_CMP[type(op)]}", node), [x, y], [])
                     for op, x, y in zip(node.ops, operands, operands[1:])]
            return ast.copy_location(ast.BoolOp(ast.And(), pairs), node)
        rest = []
        for op, comp in zip(node.ops, node.comparators):
            rest += [ast.Constant(_CMP[type(op)]), ast.Lambda(ast.arguments([], [], None, [], [], None, []), comp)]
        return ast.copy_location(ast.Call(_helper("chain", node), [node.left, *rest], []), node)

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if type(node.op) not in _BIN:
            return node
        target = node.target
        load = ast.fix_missing_locations(ast.copy_location(_as_load(target), target))
        value = ast.Call(_helper(f"b{_BIN[type(node.op)]}", node), [load, node.value], [])
        return ast.copy_location(ast.Assign([target], value), node)

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr in _REDUCTION_METHODS and not node.args \
                and not node.keywords:  # a.sum(): numba-cuda's reduction where `a` is an array
            call = ast.Call(_helper("reduce", node), [node.func.value, ast.Constant(node.func.attr)], [])
            return ast.copy_location(call, node)
        return node

    def visit_Assign(self, node):
        self.generic_visit(node)
        if any(isinstance(t, ast.Subscript) for t in node.targets):  # `out[i] = f(x)` of a may-be-None result
            node.value = ast.copy_location(ast.Call(_helper("stored", node), [node.value], []), node.value)
        return node

    def _loop(self, node):
        self.generic_visit(node)
        tick = ast.Expr(ast.Call(_helper("tick", node), [], []))
        node.body.insert(0, ast.copy_location(tick, node.body[0] if node.body else node))
        return node

    visit_For = visit_While = _loop


def _simple(node) -> bool:
    """An operand that evaluates the same, without effects, however often it is read."""
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    return isinstance(node, ast.Attribute) and _simple(node.value)


def _as_load(target):
    if isinstance(target, ast.Name):
        return ast.Name(target.id, ast.Load())
    if isinstance(target, ast.Subscript):
        return ast.Subscript(target.value, target.slice, ast.Load())
    if isinstance(target, ast.Attribute):
        return ast.Attribute(target.value, target.attr, ast.Load())
    raise SyntaxError("unsupported augmented-assignment target")


def rewrite_function(fn, helpers, ops):
    """FN compiled again from its source with typed operators, in a copy of its globals where `math`,
    math's functions and the builtins min/max/abs/round/pow are Numba's."""
    import cmath
    import math

    if any(v is cmath for v in fn.__globals__.values()):
        # cmath returns Python complex (complex128) where Numba types complex64 results: rewritten operators
        # would widen what follows, so the simulator's own NumPy promotion (weak Python scalars) stays
        raise ValueError("it calls cmath, whose results the typed operators would widen")
    lines, first = inspect.getsourcelines(fn)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    fdef = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    fdef.decorator_list = []
    tree.body = [_Rewrite().visit(fdef)]
    ast.increment_lineno(tree, first - 1)
    ast.fix_missing_locations(tree)
    code = compile(tree, inspect.getsourcefile(fn) or fn.__code__.co_filename, "exec")
    glob = dict(fn.__globals__)
    if fn.__closure__:
        glob.update({n: c.cell_contents for n, c in zip(fn.__code__.co_freevars, fn.__closure__)})
    for name, value in list(glob.items()):
        if value is math:
            glob[name] = ops.MATH
        elif callable(value) and getattr(value, "__module__", None) == "math":
            glob[name] = getattr(ops.MATH, getattr(value, "__name__", name))
        elif type(value).__name__ == "CPUDispatcher":  # an @njit helper: its result boxed as a Python scalar
            glob[name] = ops.typed_cpu(value)
        elif value is np:
            glob[name] = ops.NUMPY
        elif callable(value) and getattr(np, getattr(value, "__name__", ""), None) is value:
            glob[name] = getattr(ops.NUMPY, value.__name__)  # `from numpy import sum`
    for name, shim in ops.BUILTINS.items():
        if name not in fn.__globals__:
            glob[name] = shim
    glob[HELPERS] = helpers
    namespace = {}
    exec(code, glob, namespace)
    new = namespace[fdef.name]
    new.__defaults__ = fn.__defaults__
    return new


def rewrite_namespace(values, helpers, ops) -> list[str]:
    """Rewrite every simulated kernel and device function among VALUES; notes for those left as written."""
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    notes = []
    for value in list(values):
        if not isinstance(value, FakeCUDAKernel) or getattr(value, "_n2c_rewritten", False):
            continue
        value._n2c_rewritten = True
        try:
            value.fn = rewrite_function(value.fn, helpers, ops)
        except (OSError, TypeError, SyntaxError, StopIteration, ValueError) as exc:
            value._n2c_as_written = True  # each case of it says so (verify's reference may be reused)
            notes.append(f"{getattr(value.fn, '__name__', value)!s} runs in the simulator as written "
                         f"({type(exc).__name__}: {exc}): where NumPy's promotion differs from Numba's typing, "
                         "its reference may differ from Numba on the GPU")
    return notes


def rewrite_module_of(kernel, helpers, ops) -> list[str]:
    """A kernel example() returned (perhaps made by a factory) and the device functions its globals hold."""
    fn = getattr(kernel, "fn", None)
    values = [kernel] + (list(fn.__globals__.values()) if fn is not None else [])
    if fn is not None and fn.__closure__:
        values += [c.cell_contents for c in fn.__closure__ if _filled(c)]
    return rewrite_namespace(values, helpers, ops)


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------- the simulator's own API, corrected

def patch_simulator(ops) -> None:
    """Kernel-API fixes in the simulator's classes (once per process)."""
    import numba.cuda as cuda_module
    from numba.cuda import types as nbtypes
    from numba.cuda.np import numpy_support
    from numba.cuda.simulator import kernel, kernelapi

    if getattr(kernelapi, "_n2c_patched", False):
        return
    kernelapi._n2c_patched = True
    warnings.filterwarnings("ignore", category=RuntimeWarning)  # wraparound and x / 0 are values on the GPU

    def as_dtype(dtype):
        return numpy_support.as_dtype(dtype) if isinstance(dtype, nbtypes.Type) else np.dtype(dtype)

    def shared_array(self, shape, dtype, alignment=None):
        dtype = as_dtype(dtype)
        if isinstance(shape, (int, np.integer)) and int(shape) == 0:
            count = self._dynshared_size // dtype.itemsize
            return np.frombuffer(self._dynshared.data, dtype=dtype, count=count)
        caller = sys._getframe(1)  # one array per declaration site (file, line), as the simulator keys them
        key = (caller.f_code.co_filename, caller.f_lineno)
        res = self._allocations.get(key)
        if res is None:
            res = self._allocations[key] = np.empty(shape, dtype)
        return res

    def local_array(self, shape, dtype, alignment=None):
        return np.empty(shape, as_dtype(dtype))

    kernelapi.FakeCUDAShared.array = shared_array
    kernelapi.FakeCUDALocal.array = local_array

    thread_init = kernel.BlockThread.__init__

    def init(self, f, *args, **kwargs):  # a thread whose Numba original raised ends; the others go on
        def stopping(*a, **k):
            try:
                f(*a, **k)
            except ops.ThreadStops:
                pass
        thread_init(self, stopping, *args, **kwargs)
    kernel.BlockThread.__init__ = init

    atomic = kernelapi.FakeCUDAAtomic
    for name in ("add", "sub", "and_", "or_", "xor", "inc", "dec", "exch", "max", "min", "nanmax", "nanmin"):
        original = getattr(atomic, name)

        def typed(self, array, index, val, _original=original):
            return _original(self, array, index, array.dtype.type(val))
        setattr(atomic, name, typed)

    module = kernelapi.FakeCUDAModule
    module.fma = lambda self, a, b, c: _fused(ops, a, b, c)
    module.cbrt = lambda self, a: ops.MATH.cbrt(a)
    for name, fn in _WARP_API.items():
        setattr(module, name, fn)
    # numba.cuda.X in a kernel (after `import numba`) and `from numba.cuda import X`: the launch's module
    # (gridDim and blockDim are attributes each launch's module sets, so dir() of the class lacks them)
    for name in [n for n in dir(module) if not n.startswith("_")] + ["gridDim", "blockDim"]:
        if not hasattr(cuda_module, name):
            setattr(cuda_module, name, _Forward(kernel, name))


def _fused(ops, a, b, c):
    dtype = np.float32 if all(isinstance(v, np.float32) for v in (a, b, c)) else np.float64
    fma = ops._libm("fma", np.dtype(dtype), 3)
    return fma(a, b, c)


class _Forward:
    """numba.cuda.NAME outside the launch's globals: looked up in the running launch's simulated module."""

    def __init__(self, kernel_module, name):
        self._kernel, self._name = kernel_module, name

    def _target(self):
        ctx = self._kernel._get_kernel_context()
        if ctx is None:
            raise RuntimeError(f"numba.cuda.{self._name} used outside a kernel")
        return getattr(ctx, self._name)

    def __call__(self, *args, **kwargs):
        return self._target()(*args, **kwargs)

    def __getattr__(self, attr):
        return getattr(self._target(), attr)


# ---------------------------------------------------------------- warp collectives

class _Warp:
    """One warp's rendezvous: every live lane of the mask arrives, then each takes its result."""

    def __init__(self, block, warp, lanes):
        self.cond = threading.Condition()
        self.arrived = {}  # lane -> (kind, value, arg)
        self.results = {}
        self.generation = 0
        self.block, self.warp, self.lanes = block, warp, lanes
        self.threads = {}

    def live(self) -> int:
        """Lanes that have not exited (a lane whose simulator thread has not started yet is alive)."""
        if len(self.threads) < self.lanes:
            for t in threading.enumerate():
                tid = getattr(t, "thread_id", None)
                if tid is not None and tid // 32 == self.warp and tuple(getattr(t, "blockIdx", ())) == self.block:
                    self.threads[tid % 32] = t
        mask = 0
        for lane in range(self.lanes):
            t = self.threads.get(lane)
            if t is None or t.is_alive() or t.ident is None:
                mask |= 1 << lane
        return mask


_WARPS_LOCK = threading.Lock()


def _warp_of(self):
    t = threading.current_thread()
    lane, warp = t.thread_id % 32, t.thread_id // 32
    key = (tuple(t.blockIdx), warp)
    with _WARPS_LOCK:
        warps = self.__dict__.setdefault("_n2c_warps", {})
        w = warps.get(key)
        if w is None:
            nthreads = self.blockDim.x * self.blockDim.y * self.blockDim.z
            w = warps[key] = _Warp(key[0], warp, min(32, nthreads - 32 * warp))
    return lane, w


def _collective(self, kind, mask, value=None, arg=None):
    lane, w = _warp_of(self)
    with w.cond:
        gen = w.generation
        w.arrived[lane] = (kind, value, arg)
        deadline = time.monotonic() + 60
        while w.generation == gen:
            members = int(mask) & w.live() & 0xFFFFFFFF
            if members & ~sum(1 << k for k in w.arrived) == 0:
                _complete(w, members)
                break
            if not w.cond.wait(timeout=0.05) and time.monotonic() > deadline:
                raise RuntimeError(f"warp collective {kind}: lanes of mask {int(mask):#x} never arrived")
        return w.results.pop((gen, lane))


def _complete(w, members):
    gen, arrived = w.generation, w.arrived
    preds = sum(1 << k for k, (_, v, _) in arrived.items() if v)
    for lane, (kind, value, arg) in arrived.items():
        if kind in ("idx", "up", "down", "xor"):
            src = {"idx": int(arg) & 31, "up": lane - int(arg), "down": lane + int(arg), "xor": lane ^ int(arg)}[kind]
            ok = 0 <= src < 32 and (members >> src) & 1 and src in arrived
            res = arrived[src][1] if ok else value
        elif kind == "all":
            res = (preds & members) == members
        elif kind == "any":
            res = (preds & members) != 0
        elif kind == "eq":
            res = (preds & members) in (0, members)
        elif kind == "ballot":
            res = np.uint32(preds & members)
        elif kind in ("match_any", "match_all"):
            same = sum(1 << k for k, (_, v, _) in arrived.items() if v == value and (members >> k) & 1)
            res = np.uint32(same) if kind == "match_any" else ((np.uint32(members), True) if same == members
                                                                else (np.uint32(0), False))
        else:  # syncwarp
            res = None
        w.results[(gen, lane)] = res
    w.arrived = {}
    w.generation += 1
    w.cond.notify_all()


_WARP_API = {
    "syncwarp": lambda self, mask=0xFFFFFFFF: _collective(self, "sync", mask),
    "shfl_sync": lambda self, mask, value, src: _collective(self, "idx", mask, value, src),
    "shfl_up_sync": lambda self, mask, value, delta: _collective(self, "up", mask, value, delta),
    "shfl_down_sync": lambda self, mask, value, delta: _collective(self, "down", mask, value, delta),
    "shfl_xor_sync": lambda self, mask, value, lanemask: _collective(self, "xor", mask, value, lanemask),
    "all_sync": lambda self, mask, pred: _collective(self, "all", mask, bool(pred)),
    "any_sync": lambda self, mask, pred: _collective(self, "any", mask, bool(pred)),
    "eq_sync": lambda self, mask, pred: _collective(self, "eq", mask, bool(pred)),
    "ballot_sync": lambda self, mask, pred: _collective(self, "ballot", mask, bool(pred)),
    "match_any_sync": lambda self, mask, value: _collective(self, "match_any", mask, value),
    "match_all_sync": lambda self, mask, value: _collective(self, "match_all", mask, value),
    "activemask": lambda self: np.uint32(_warp_of(self)[1].live()),
    "lanemask_lt": lambda self: np.uint32((1 << (threading.current_thread().thread_id % 32)) - 1),
}


def install(mod, ops) -> tuple[_Helpers, list[str]]:
    """Patch the simulator and rewrite the module's kernels; (helpers whose .deadline the caller sets, notes)."""
    patch_simulator(ops)
    ops._context()  # before any simulator thread types an operation
    helpers = _Helpers(ops)
    return helpers, rewrite_namespace(vars(mod).values(), helpers, ops)
