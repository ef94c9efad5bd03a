"""Planted translations for testing the checker: wrong ones (each must be NOT EQUIVALENT, exit 1) and equivalent
rewrites (each must stay EQUIVALENT), made by text edits of a kernel's real translation.

Each operator takes the .cu text (and the scalar arguments the example passes, by parameter name) and returns
the edited text, or None where it does not apply. The operators work on the shape of any translation the
rules emit (a `__global__` kernel, one statement per line with its `// file.py:N` comment), not on one kernel's
text, so they also serve for kernels written outside the project (see README "Verify": the checker is tested).
"""

from __future__ import annotations

import re

STORE_OPS = r"(?:=|\+=|-=|\*=|/=)"


def kernel_body(text):
    """(start, end, signature) of the first __global__ kernel's body."""
    m = re.search(r"__global__ void \w+\(([^)]*)\)\n\{\n", text)
    if not m:
        return None
    end = text.index("\n}\n", m.end())
    return m.end(), end, m.group(1)


def pointer_params(signature):
    """({name: type} of read-only inputs, {name: type} of outputs) from the kernel's parameter list."""
    inputs, outputs = {}, {}
    for part in signature.split(","):
        pm = re.fullmatch(r"\s*(const )?([\w:]+) \*(\w+)\s*", part)
        if pm:
            (inputs if pm.group(1) else outputs)[pm.group(3)] = pm.group(2)
    return inputs, outputs


def scalar_params(signature):
    out = {}
    for part in signature.split(","):
        pm = re.fullmatch(r"\s*(?:const )?([\w:]+) (\w+)\s*", part)
        if pm and not pm.group(2).endswith(("_shape0", "_shape1", "_shape2", "_arg")):
            out[pm.group(2)] = pm.group(1)
    return out


def blank(line):
    """`    x[i] = y;  // f.py:3` -> `    ;  // f.py:3`."""
    code, sep, comment = line.partition("  //")
    return code[: len(code) - len(code.lstrip())] + ";" + sep + comment


def on_body(fn):
    def run(text, scalars=None):
        kb = kernel_body(text)
        if kb is None:
            return None
        start, end, sig = kb
        new = fn(text[start:end], sig, scalars or {})
        return None if new is None or new == text[start:end] else text[:start] + new + text[end:]
    run.__name__ = fn.__name__
    run.__doc__ = fn.__doc__
    return run


def _lines(body):
    return body.split("\n")


def _first(body, pattern, last=False):
    lines = _lines(body)
    idx = [i for i, line in enumerate(lines) if re.search(pattern, line.partition("//")[0])]
    if not idx:
        return None, lines
    return idx[-1] if last else idx[0], lines


# ---------------------------------------------------------------- wrong translations

@on_body
def noop(body, sig, scalars):
    """The last store to an output removed."""
    _, outputs = pointer_params(sig)
    if not outputs:
        return None
    names = "|".join(outputs)
    i, lines = _first(body, r"^\s*(?:(?:%s)\[.*\]\s*%s |atomic\w+\(&(?:%s)\[)" % (names, STORE_OPS, names), last=True)
    if i is None:
        return None
    lines[i] = blank(lines[i])
    return "\n".join(lines)


# Kernels where a planted change is invisible on the inputs the corpus sweep checks (example()'s "small" case,
# and no redraws where the original cannot run), by kernel: the change is wrong in general (a full verify, with
# the module's other sizes, rejects it) but the sweep would count the verifier's silence as a miss.
INVISIBLE = {
    # skipping the plate's last row: that row is the bottom edge, 0 in both buffers of example()'s plate, and the
    # sweep only copies it (dst[h-1, x] = src[h-1, x]): 0 over 0; size 1 (one row) rejects it
    ("skipped tail", "laplace_sweeps"),
}


def _kernel_name(text):
    m = re.search(r"__global__ void (\w+)\(", text)
    return m.group(1) if m else ""


@on_body
def _tail(body, sig, scalars):
    extents = set(re.findall(r"\b\w+_shape\d\b", sig)) | set(re.findall(r"int64_t (\w+) = \w+_shape\d;", body))
    for m in re.finditer(r"(?<![<>=!]) < (\w+)\b(?! \+| -| \*| /)", body):
        if m.group(1) in extents:
            return body[: m.end()] + " - 1" + body[m.end():]
    return None


def tail(text, scalars=None):
    """The first bound check against an array extent loses its last element."""
    if ("skipped tail", _kernel_name(text)) in INVISIBLE:
        return None
    return _tail(text, scalars)


@on_body
def past_end(body, sig, scalars):
    """A bound check against an array extent lets one more element through: a write past the end."""
    extents = set(re.findall(r"\b\w+_shape\d\b", sig)) | set(re.findall(r"int64_t (\w+) = \w+_shape\d;", body))
    for m in re.finditer(r"(?<![<>=!]) < (\w+)\b(?! \+| -| \*| /)", body):
        if m.group(1) in extents:
            return body[: m.start()] + " <= " + body[m.start() + 3:]
    return None


@on_body
def nosync(body, sig, scalars):
    """The first __syncthreads removed."""
    i, lines = _first(body, r"^\s*__syncthreads\(\);")
    if i is None:
        return None
    lines[i] = blank(lines[i])
    return "\n".join(lines)


@on_body
def lastsync(body, sig, scalars):
    """The last __syncthreads removed (where there are two or more)."""
    lines = _lines(body)
    idx = [i for i, line in enumerate(lines) if line.strip().startswith("__syncthreads();")]
    if len(idx) < 2:
        return None
    lines[idx[-1]] = blank(lines[idx[-1]])
    return "\n".join(lines)


@on_body
def wrong_index(body, sig, scalars):
    """The last load from a read-only input reads element (i) / 2 (still in bounds)."""
    inputs, _ = pointer_params(sig)
    found = list(re.finditer(r"\b(%s)\[" % "|".join(inputs), body)) if inputs else []
    if not found:
        return None
    m = found[-1]
    depth, j = 1, m.end()
    while depth:
        depth += {"[": 1, "]": -1}.get(body[j], 0)
        j += 1
    return body[: m.end()] + "(" + body[m.end(): j - 1] + ") / 2" + body[j - 1:]


@on_body
def write_input(body, sig, scalars):
    inputs, _ = pointer_params(sig)
    if not inputs:
        return None
    name, ty = next(iter(inputs.items()))
    plant = (f"    if (threadIdx.x == 0 && threadIdx.y == 0 && blockIdx.x == 0 && blockIdx.y == 0) "
             f"const_cast<{ty} *>({name})[0] = ({ty})({name}[0] == ({ty})7 ? 8 : 7);\n")
    return plant + body


@on_body
def widen_accumulator(body, sig, scalars):
    """A float accumulator (a float local updated with +=) kept in double."""
    for m in re.finditer(r"\bfloat (\w+) = ", body):
        if re.search(r"\b%s \+= " % m.group(1), body):
            return body[: m.start()] + "double" + body[m.start() + 5:]
    return None


@on_body
def round_through_float(body, sig, scalars):
    """A double result stored through float: a float64 output rounded to float32 precision."""
    _, outputs = pointer_params(sig)
    doubles = [n for n, t in outputs.items() if t == "double"]
    for m in re.finditer(r"\b(%s)\[[^\n]*?\] = (.+);" % "|".join(doubles), body) if doubles else ():
        return body[: m.start(2)] + f"(double)(float)({m.group(2)})" + body[m.end(2):]
    return None


@on_body
def narrow_index(body, sig, scalars):
    """The first int64 local that holds a grid index, a loop counter or an extent kept in 32 bits."""
    m = re.search(r"\bint64_t (\w+) = ", body)
    if not m:
        return None
    return body[: m.start()] + "int" + body[m.start() + 7:]


@on_body
def atomic_to_plain(body, sig, scalars):
    """An atomic update done as a plain read-modify-write."""
    m = re.search(r"atomicAdd\(&(\w+\[[^\n]*?\]), ([^\n]+)\);", body)
    if m:
        return body[: m.start()] + f"{m.group(1)} += {m.group(2)};" + body[m.end():]
    m = re.search(r"atomicMax\(&(\w+\[[^\n]*?\]), ([^\n]+)\);", body)
    if m:
        return body[: m.start()] + f"{m.group(1)} = max({m.group(1)}, {m.group(2)});" + body[m.end():]
    return None


def _constants(text) -> dict:
    return {n: int(v) for n, v in re.findall(r"constexpr int64_t (\w+) = (-?\d+);", text)}


def shared_short(text, scalars=None):
    """A static __shared__ array declared one element too short (in its last dimension; in its first where
    the last is a bank-conflict pad, one more than the dimension before it: that spare column is never
    indexed, so dropping it changes nothing but the banks, as transpose's (TILE, TILE + 1) tile shows)."""
    kb = kernel_body(text)
    if kb is None:
        return None
    start, end, _ = kb
    body = text[start:end]
    m = re.search(r"__shared__ [^\n\[]*\w+((?:\[[^\]]+\])+);", body)
    if not m:
        return None
    dims = list(re.finditer(r"\[([^\]]+)\]", m.group(1)))
    values = [_constants(text).get(d.group(1).strip(), int(d.group(1)) if d.group(1).strip().isdigit() else None)
              for d in dims]
    pad = len(dims) > 1 and None not in values[-2:] and values[-1] == values[-2] + 1
    at = m.start(1) + dims[0 if pad else -1].end(1)
    return text[:start] + body[:at] + " - 1" + body[at:] + text[end:]


@on_body
def scalar_constant(body, sig, scalars):
    """A scalar parameter replaced by the one value example() passes."""
    for name, ty in scalar_params(sig).items():
        if name in scalars and isinstance(scalars[name], (int, float)) and not isinstance(scalars[name], bool) \
                and re.search(r"\b%s\b" % name, body):
            value = repr(scalars[name]) + ("f" if ty == "float" and isinstance(scalars[name], float) else "")
            if ty in ("float", "double") and isinstance(scalars[name], int):
                value = f"{scalars[name]}.0" + ("f" if ty == "float" else "")
            return re.sub(r"\b%s\b" % name, f"({value})", body)
    return None


@on_body
def zero_identity(body, sig, scalars):
    """A max or min reduction starting from 0 instead of -inf / +inf."""
    m = re.search(r"-\s*\(?\s*(?:\(double\)|\(float\))?\s*INFINITY\)?|-INFINITY|\bINFINITY\b", body)
    if not m:
        return None
    return body[: m.start()] + "0" + body[m.end():]


@on_body
def wrong_stride(body, sig, scalars):
    """A grid-stride loop steps by the block instead of the grid."""
    m = re.search(r"\(int64_t\)blockDim\.x \* gridDim\.x", body)
    if not m:
        return None
    return body[: m.start()] + "(int64_t)blockDim.x" + body[m.end():]


def _number_outputs(sig) -> dict:
    """The outputs whose elements an int converts to (not records such as RNG states)."""
    _, outputs = pointer_params(sig)
    return {n: t for n, t in outputs.items() if not t.startswith("n2c::xoroshiro")}


@on_body
def divide_by_zero(body, sig, scalars):
    """An integer division by a zero the compiler cannot see, its result stored (C traps: SIGFPE)."""
    outputs = _number_outputs(sig)
    if not outputs:
        return None
    name, ty = next(iter(outputs.items()))
    plant = (f"    {{ volatile int n2c_zero = 0; int n2c_q = 12345 / n2c_zero; "
             f"if (threadIdx.x == 0 && blockIdx.x == 0) {name}[0] = ({ty})n2c_q; }}\n")
    return body + "\n" + plant


@on_body
def far_out_of_bounds(body, sig, scalars):
    """A write far past the end of an output (on a GPU, memory of something else)."""
    outputs = _number_outputs(sig)
    if not outputs:
        return None
    name, ty = next(iter(outputs.items()))
    plant = f"    if (threadIdx.x == 0 && blockIdx.x == 0) {name}[1 << 20] = ({ty})0;\n"
    return plant + body


WRONG = {"no-op": noop, "skipped tail": tail, "write past the end": past_end, "missing barrier": nosync,
         "race (last barrier removed)": lastsync, "wrong index": wrong_index, "write to an input": write_input,
         "float32 accumulated in double": widen_accumulator, "float64 rounded through float32": round_through_float,
         "int64 narrowed to int32": narrow_index, "atomic as a plain update": atomic_to_plain,
         "shared array one too short": shared_short, "scalar hard-coded": scalar_constant,
         "reduction identity 0": zero_identity, "wrong grid stride": wrong_stride,
         "integer division by zero": divide_by_zero, "write far out of bounds": far_out_of_bounds}


# ---------------------------------------------------------------- equivalent rewrites

@on_body
def rename_local(body, sig, scalars):
    """A local variable renamed everywhere."""
    m = re.search(r"\b(?:int64_t|int|float|double) (\w+) = ", body)
    if not m:
        return None
    name = m.group(1)
    return re.sub(r"(?<![.\w])%s\b" % name, f"{name}_renamed", body)


@on_body
def reorder_declarations(body, sig, scalars):
    """Two adjacent independent declarations swapped."""
    lines = _lines(body)
    decl = re.compile(r"^\s+(?:const )?(?:int64_t|int|float|double) (\w+) = ([^;]*);")
    for i in range(len(lines) - 1):
        a, b = decl.match(lines[i]), decl.match(lines[i + 1])
        if a and b and not re.search(r"\b%s\b" % a.group(1), b.group(2)) and \
                not re.search(r"\b%s\b" % b.group(1), a.group(2)):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
            return "\n".join(lines)
    return None


@on_body
def double_as_add(body, sig, scalars):
    """An integer doubling written as an addition (x * 2 -> x + x)."""
    m = re.search(r"\b([a-z_]\w*) \* 2\b(?!\.)", body)
    if not m or re.search(r"\bdouble %s\b|\bfloat %s\b" % (m.group(1), m.group(1)), body):
        return None
    return body[: m.start()] + f"({m.group(1)} + {m.group(1)})" + body[m.end():]


@on_body
def redundant_barrier(body, sig, scalars):
    """A __syncthreads added where every thread reaches it (before anything else)."""
    return "    __syncthreads();\n" + body


@on_body
def split_loop(body, sig, scalars):
    """A counted loop split into two halves."""
    m = re.search(r"\n(\s*)for \(int64_t (\w+) = 0; \2 < (\w+); \+\+\2\) \{([^{}]*?)\n\1\}", body)
    if not m:
        return None
    ind, v, n, inner = m.group(1), m.group(2), m.group(3), m.group(4)
    half = f"{n} / 2"
    new = (f"\n{ind}for (int64_t {v} = 0; {v} < {half}; ++{v}) {{{inner}\n{ind}}}"
           f"\n{ind}for (int64_t {v} = {half}; {v} < {n}; ++{v}) {{{inner}\n{ind}}}")
    return body[: m.start()] + new + body[m.end():]


@on_body
def swap_operands(body, sig, scalars):
    """An addition of two loads written the other way round (a + b == b + a, also in floating point)."""
    m = re.search(r"= (\w+\[[^\]\n]+\]) \+ (\w+\[[^\]\n]+\]);", body)
    if not m:
        return None
    return body[: m.start()] + f"= {m.group(2)} + {m.group(1)};" + body[m.end():]


EQUIVALENT = {"local renamed": rename_local, "declarations reordered": reorder_declarations,
              "x * 2 as x + x": double_as_add, "redundant barrier": redundant_barrier, "loop split": split_loop,
              "operands swapped": swap_operands}
