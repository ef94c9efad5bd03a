"""Numba's semantic traps, checked by running the emitted C on the CPU runtime against Numba itself.

Each case is a plain Python function. It is translated as a @cuda.jit(device=True) function
called by a small elementwise kernel, compiled with g++ against the CPU runtime, and run on
many inputs. The reference is the same function compiled by numba.njit (Numba's CPU target
shares the CUDA target's typing rules; error_model="numpy" as on the GPU), so a translation
that types a variable differently from Numba, or rounds where Numba does not, fails here.
"""

from __future__ import annotations

import inspect
import math
import textwrap

import numpy as np
import pytest

pytestmark = pytest.mark.needs("g++")  # the emitted C runs on the CPU runtime (g++)

numba = pytest.importorskip("numba")

from translator.runtime.cpu_launch import load_cpu  # noqa: E402


# ------------------------------------------------------------------ the cases

def floor_div_mod(a, b):
    return a // b, a % b


def int_true_division(a, b):
    return a / b, (a - 3) / 4


def float_floor_div_mod(x, y):
    return x // y, x % y


def float64_literal_in_float32(x, y):
    # 0.1 is float64 in Numba: x * 0.1 is computed (and stays) in double precision
    s = x * 0.1
    t = np.float32(x * 0.1)
    u = x * np.float32(0.1)
    return s, t, u, x + y * 0.5


def accumulators(x, y):
    acc = 0  # int64, then unified with float32 at the loop's phi: float64
    acc32 = np.float32(0)
    for i in range(7):
        acc += x * i + y
        acc32 += x * i + y
    return acc, acc32


def redefined_variable(x, y):
    v = 0
    v = x  # a new SSA version: float32, not unified with the int above
    w = v * y
    return w, v + np.float32(0.25)


def per_use_types(x, n):
    # Numba types each use by the bindings that reach it (its phi nodes): the int versions of k and s before a
    # float rebinding stay ints, which `&` and `<<` need; after the join they are float64
    k = int(x * 4)
    wrapped = (k * 2654435761) & 0xFFFF
    if x > 0.5:
        k = x
    s = n
    shifted = s << 3
    for j in range(3):
        s = s + 0.25
    return wrapped, k, shifted, s


def operands_of_and_or(x, y):
    # `a and b` / `a or b` of numbers are one of the operands (Numba's phi of both), not a bool
    return (x and y), (x or y), (x or 2.5), (np.float32(0.0) and x), ((x > 0) or y)


def negative_step_ranges(a, b):
    total = 0
    count = 0
    for i in range(a, b, -3):
        total += i
        count += 1
    last = -1000
    for j in range(b, a, 2):
        last = j
    for k in range(a, a):  # never runs: k keeps its value
        last = k
    return total, count, last


def loop_variable_after_loop(a, b):
    i = -1
    for i in range(a % 7 + 1):
        pass
    j = 100
    for j in range(b % 5, b % 5):
        pass
    n = 0
    while True:
        n += 1
        if n > (a % 11) + 2:
            break
        if n % 2 == 0:
            continue
        i += n
    return i, j, n


def int32_overflow_promotes(a, b):
    # int32 * int32 is int64 in Numba: no 32-bit wraparound
    p = np.int32(a) * np.int32(b)
    q = np.int32(a) + np.int32(2147483000)
    return p, q


def powers(x, n):
    return x ** 2, x ** 3, n ** 2, x ** 0.5 if x > 0 else 0.0, (n % 5) ** (n % 4)


def chained_and_conditional(a, b):
    inside = 1 if -3 <= a < b <= 9 else 0
    sel = a if a > b else b
    return inside, sel, (a < b) + 1, (a << 2) ^ (b >> 1), ~a & 0xFF


def builtins_and_math(x, y):
    m1 = min(x, y)
    m2 = max(x, y, np.float32(0.5))
    r = round(x * 10)
    t = int(x * 7.3)
    return m1, m2, r, t, abs(y - x), math.ceil(x / 0.3), math.floor(y), math.sqrt(abs(x)), math.exp(y / 4)


def float32_with_small_integers(x, y):
    # float32 with uint8 (or int8, int16, bool) is float32 arithmetic in Numba; uint16 and wider is float64
    s = 0.0
    s += x * y
    return s, x + y, x / (y + np.uint8(1)), x * np.int16(y), x - (y > 3), x * np.uint16(y)


def uint64_against_signed(u, n):
    # no integer type holds both a uint64 and an int64: Numba compares them (and a literal) as float64
    return u >= n, u == n, u >= 5, u > -1, u == np.uint64(n)


def small_integer_builtins(a, b):
    # abs keeps the integer's type (abs(int8(-128)) wraps to -128; an unsigned one is itself); round() of an
    # integer is that integer, an int64
    return abs(a), abs(b), round(a) * 1000 + round(b), abs(a > 0)


def nan_min_max(x, y):
    z = x / y if y != 0 else math.nan  # y == 0 gives NaN: min/max keep Python's order
    return min(z, x), max(x, z), min(x, z)


CASES = [
    (floor_div_mod, "int64"),
    (int_true_division, "int64"),
    (float_floor_div_mod, "float32"),
    (float64_literal_in_float32, "float32"),
    (accumulators, "float32"),
    (redefined_variable, "float32"),
    (per_use_types, "int64f"),
    (operands_of_and_or, "float32"),
    (negative_step_ranges, "int64"),
    (loop_variable_after_loop, "int64"),
    (int32_overflow_promotes, "int32"),
    (powers, "int64f"),
    (chained_and_conditional, "int64"),
    (builtins_and_math, "float32"),
    (nan_min_max, "float32"),
    (float32_with_small_integers, "float32uint8"),
    (uint64_against_signed, "uint64int64"),
    (small_integer_builtins, "int8uint32"),
]


def inputs(kind, rng):
    if kind == "int64":
        a = np.arange(-12, 13, dtype=np.int64).repeat(9)
        b = np.tile(np.array([-4, -3, -2, -1, 1, 2, 3, 5, 7], dtype=np.int64), 25)
        return a, b
    if kind == "int32":
        a = rng.integers(-2**31, 2**31, 200).astype(np.int32)
        b = rng.integers(-2**31, 2**31, 200).astype(np.int32)
        return a, b
    if kind == "int8uint32":
        return (np.array([-128, -1, 0, 1, 127, -77], dtype=np.int8),
                np.array([0, 1, 2**31, 2**32 - 1, 7, 5], dtype=np.uint32))
    if kind == "uint64int64":
        u = np.array([2**63 + 5, 2**53 + 1, 5, 0, 2**64 - 1, 7, 2**63], dtype=np.uint64)
        n = np.array([5, 2**53, 5, -1, -1, 8, -2**63], dtype=np.int64)
        return u, n
    if kind == "float32uint8":
        x = np.concatenate([rng.standard_normal(100), [0.1, 0.7, 0.3, -0.0]]).astype(np.float32)
        y = np.concatenate([rng.integers(0, 256, 100), [3, 255, 7, 0]]).astype(np.uint8)
        return x, y
    if kind == "int64f":
        x = np.concatenate([rng.standard_normal(100), [0.0, -0.0, 1.5, -2.5]]).astype(np.float32)
        n = np.arange(-52, 52, dtype=np.int64)
        return x, n
    x = np.concatenate([rng.standard_normal(150) * 10, [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -7.25, 3.0]])
    y = np.concatenate([rng.standard_normal(150) * 3, [0.3, -0.3, 2.0, -2.0, 0.0, 1.0, 0.7, -3.0]])
    return x.astype(np.float32), y.astype(np.float32)


def kernel_source(fn, arity, types):
    body = textwrap.dedent(inspect.getsource(fn))
    outs = ", ".join(f"r{k}" for k in range(arity))
    stores = "\n        ".join(f"out[i, {k}] = r{k}" for k in range(arity))
    return f'''
import math
import numpy as np
from numba import cuda


@cuda.jit(device=True)
{body}

@cuda.jit("void({types[0]}[::1], {types[1]}[::1], float64[:, ::1])")
def apply(a, b, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        {outs}{"," if arity == 1 else ""} = {fn.__name__}(a[i], b[i])
        {stores}
'''


@pytest.mark.parametrize("fn,kind", CASES, ids=[c[0].__name__ for c in CASES])
def test_trap_matches_numba(fn, kind):
    rng = np.random.default_rng(7)
    a, b = inputs(kind, rng)
    reference = numba.njit(error_model="numpy")(fn)
    expected = [reference(x, y) for x, y in zip(a, b)]
    arity = len(expected[0])
    expected = np.array([[float(v) for v in row] for row in expected], dtype=np.float64)
    module = load_cpu(source=kernel_source(fn, arity, (a.dtype.name, b.dtype.name)))
    out = np.full((a.shape[0], arity), np.nan)
    module.apply[(a.shape[0] + 63) // 64, 64](a, b, out)
    bad = ~((out == expected) | (np.isnan(out) & np.isnan(expected)))
    if bad.any():
        i, k = np.argwhere(bad)[0]
        pytest.fail(f"{fn.__name__}: output {k} for inputs ({a[i]!r}, {b[i]!r}): C gave {out[i, k]!r}, "
                    f"Numba gives {expected[i, k]!r}\n{module.cu}")


def test_python_semantics_directly():
    """The same traps against plain Python, independent of Numba: floor toward -inf, / is float."""
    module = load_cpu(source=kernel_source(floor_div_mod, 2, ("int64", "int64")))
    a = np.array([-7, 7, -7, 7, -1, 0], dtype=np.int64)
    b = np.array([2, -2, -2, 2, 3, 5], dtype=np.int64)
    out = np.full((6, 2), np.nan)
    module.apply[1, 32](a, b, out)
    assert out[:, 0].tolist() == [float(x // y) for x, y in zip(a.tolist(), b.tolist())]
    assert out[:, 1].tolist() == [float(x % y) for x, y in zip(a.tolist(), b.tolist())]


COUNTERS = '''
from numba import cuda

@cuda.jit("void(float64[::1], int32, int64, int64[::1])")
def count(a, m, big_m, out):
    n = 0
    for k in range(m):
        if a[k] > 0:
            n += 1
    twice = 0
    for k in range(m):
        twice += 1
        twice += 1
    wide = 0
    for k in range(big_m):
        wide += 1
    out[0] = n * 1000000000
    out[1] = twice
    out[2] = wide + n
'''


@pytest.mark.needs("g++")
def test_a_counter_that_fits_32_bits_is_an_int_and_reads_as_numbas_int64():
    """`n = 0; for k in range(m): if ...: n += 1` with m an int32 takes only values an int holds: it is declared int
    (monte_carlo_pi's hot loop, 1-2% on the H200), and a read is still Numba's int64 (n * 10**9 does not wrap).
    A counter stepped twice per iteration, or counting a loop of int64 length, stays int64."""
    module = load_cpu(source=COUNTERS)
    cu = module.cu
    assert "int n = 0;" in cu and "n++;" in cu
    assert "int64_t twice = 0;" in cu and "int64_t wide = 0;" in cu
    assert "out[0] = (int64_t)n * 1000000000;" in cu
    out = np.zeros(3, np.int64)
    module.count[1, 1](np.array([1.0, -1.0, 2.0, 3.0, 5.0]), 5, 7, out)
    assert out.tolist() == [4 * 10**9, 10, 11]


def test_operator_result_types_are_numba_cudas():
    """Every + - * / // % ** and comparison between two of Numba's scalar types, and every unification of two (a variable given
    both), typed as numba-cuda's own CUDA typing context types them: float32 * uint8 is float32, * uint16 float64."""
    import operator

    from numba import types
    from numba.core.errors import TypingError
    from numba.cuda.descriptor import cuda_target

    from translator.ir import typesys as T

    ctx = cuda_target.typing_context
    ctx.refresh()
    ops = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
           "//": operator.floordiv, "%": operator.mod, "**": operator.pow}
    ours = {"/": lambda a, b: T.truediv_result(a, b), "**": T.pow_result}
    names = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32",
             "float64", "complex64", "complex128"]
    numba_type = {n: getattr(types, "boolean" if n == "bool" else n) for n in names}

    def resolve(fn, an, bn):
        try:
            return ctx.resolve_function_type(fn, (numba_type[an], numba_type[bn]), {})
        except TypingError:
            return None

    wrong, checked = [], 0
    for an in names:
        for bn in names:
            a, b = T.SCALARS[an], T.SCALARS[bn]
            for op, fn in ops.items():
                resolved = resolve(fn, an, bn)
                if resolved is None:  # complex // and %: numba2cuda refuses them too (test_language)
                    continue
                checked += 1
                got = ours.get(op, lambda a, b, op=op: T.arith_result(a, b, op))(a, b)
                if got.name != str(resolved.return_type):
                    wrong.append(f"{an} {op} {bn}: numba-cuda {resolved.return_type}, numba2cuda {got.name}")
            for op in (operator.lt, operator.eq):
                resolved = resolve(op, an, bn)
                if resolved is None:  # complex < x
                    continue
                checked += 1
                common = T.compare_common(a, b).name
                if {str(t) for t in resolved.args} != {common}:
                    wrong.append(f"{an} {op.__name__} {bn}: numba-cuda compares as {resolved.args}, numba2cuda "
                                 f"as {common}")
            unified = ctx.unify_pairs(numba_type[an], numba_type[bn])
            if T.unify(a, b).name != str(unified):
                wrong.append(f"unify({an}, {bn}): numba-cuda {unified}, numba2cuda {T.unify(a, b).name}")
    assert checked > 1000
    assert not wrong, "\n".join(wrong)


def test_math_function_types_are_numba_cudas():
    """math.* and cuda.fma/cbrt of every scalar type (but float16, which numba-cuda's fp16 overloads take first)
    typed as numba-cuda's typing context types them, by the signature lists tools/numba_math_cases.py copies from
    it: math.floor(float32) is float32, math.fmod(float32, int8) float32, math.pow(int8, int8) float32."""
    import itertools

    from numba import types
    from numba.core.errors import TypingError
    from numba.cuda import cudadecl
    from numba.cuda.descriptor import cuda_target

    from translator.ir import intrinsics
    from translator.ir import typesys as T
    from translator.ir.numba_cases import CASES

    ctx = cuda_target.typing_context
    ctx.refresh()
    names = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64"]
    stubs = {"cuda.fma": cudadecl.Cuda_fma, "cuda.cbrt": cudadecl.Cuda_cbrt}
    wrong, checked = [], 0
    for key in CASES:
        fn = types.Function(stubs[key]) if key in stubs else getattr(math, key.split(".")[1])
        entry = intrinsics.TABLE[key]
        for combo in itertools.product(names, repeat=entry.nargs[0]):
            if len(combo) == 3 and len(set(combo)) > 1:
                continue
            try:
                resolved = ctx.resolve_function_type(fn, tuple(getattr(types, "boolean" if n == "bool" else n)
                                                               for n in combo), {})
            except TypingError:
                resolved = None
            ours = entry.result([T.SCALARS[n] for n in combo])
            theirs = None if resolved is None else resolved.return_type
            if isinstance(theirs, types.UniTuple):
                theirs = f"Tuple({theirs.dtype}, {theirs.dtype})"
            checked += 1
            if str(theirs) != str(ours):
                wrong.append(f"{key}{combo}: numba-cuda {theirs}, numba2cuda {ours}")
    assert checked > 1300
    assert not wrong, "\n".join(wrong[:40])
