"""Numba type strings -> NumbaType; Numba's typing rules for operators, unification and C spellings."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Scalar:
    name: str  # Numba spelling: "int32", "float32", "bool"
    kind: str  # "b" bool, "i" signed, "u" unsigned, "f" float
    bits: int

    def __str__(self) -> str:
        return self.name

    @property
    def is_int(self) -> bool:
        return self.kind in "iu"

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def signed(self) -> bool:
        return self.kind in "if"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"


@dataclass(frozen=True)
class Array:
    dtype: Scalar
    ndim: int
    layout: str = "C"  # "C" contiguous or "A" any (checked contiguous at launch); "F" column-major (Fortran
    # order: the first index steps by one element); "W" a window (a device function's
    # parameter: its pitch comes with it); "S" a strided window (its pitch and its step come with it); "P" a CPointer (a pointer without a length, indexed as is)

    def __str__(self) -> str:
        if self.layout == "P":
            return f"CPointer({self.dtype})"
        if self.ndim == 0:  # a 0-d array (np.ndarray(()), Numba's array(float32, 0d, C)): one element, no extents
            return f"{self.dtype}[()]"
        if self.layout == "F":
            return f"{self.dtype}[{', '.join(['::1'] + [':'] * (self.ndim - 1))}]"
        dims = ", ".join([":"] * (self.ndim - 1) + ["::1" if self.layout == "C" else ":"])
        return f"{self.dtype}[{dims}]"


@dataclass(frozen=True)
class Tuple:
    items: tuple
    names: tuple = ()  # a namedtuple's field names (Numba's NamedTuple): its items read as x.name too

    def __str__(self) -> str:
        if self.names:
            return "NamedTuple(" + ", ".join(f"{n}={t}" for n, t in zip(self.names, self.items)) + ")"
        return "Tuple(" + ", ".join(map(str, self.items)) + ")"


@dataclass(frozen=True)
class Void:
    def __str__(self) -> str:
        return "void"


VOID = Void()
BOOL = Scalar("bool", "b", 8)
INT8, INT16, INT32, INT64 = (Scalar(f"int{b}", "i", b) for b in (8, 16, 32, 64))
UINT8, UINT16, UINT32, UINT64 = (Scalar(f"uint{b}", "u", b) for b in (8, 16, 32, 64))
FLOAT16, FLOAT32, FLOAT64 = (Scalar(f"float{b}", "f", b) for b in (16, 32, 64))
# numba.cuda.bf16's bfloat16: cuda_bf16.h's __nv_bfloat16, whose C++ operators and functions numba-cuda binds; a
# value of kernels only (NumPy has no bfloat16 array to pass), so it is no signature's type
BFLOAT16 = Scalar("bfloat16", "f", 16)
COMPLEX64, COMPLEX128 = Scalar("complex64", "c", 64), Scalar("complex128", "c", 128)
# numba-cuda's FP8 types (numba.cuda._internal.cuda_fp8): cuda_fp8.h's __nv_fp8_e5m2, __nv_fp8_e4m3 and
# __nv_fp8_e8m0, storage types made and read only through cuda_fp8.h's constructors and conversions, which
# numba-cuda binds (kind "q": no arithmetic, no implicit conversion); values of kernels only, like bfloat16
FP8_E5M2, FP8_E4M3, FP8_E8M0 = (Scalar(f"fp8_{f}", "q", 8) for f in ("e5m2", "e4m3", "e8m0"))
FP8 = (FP8_E5M2, FP8_E4M3, FP8_E8M0)
# cuda_bf16.h's __nv_bfloat16_raw (a bfloat16's bits in .x), which cuda_fp8.h's e8m0 conversions take and give
BF16RAW = Scalar("bfloat16_raw", "q", 16)
CUDA_FP8_TYPES = (*FP8, BF16RAW)  # the types a translation needs <cuda_fp8.h> for

# numba.cuda.random's generator state: a record of two uint64 (s0, s1), as create_xoroshiro128p_states makes it;
# an array element only, passed to the xoroshiro128p_* functions (kind "r": no arithmetic).
XOROSHIRO128P = Scalar("xoroshiro128p_type", "r", 128)
RECORDS = {XOROSHIRO128P.name: XOROSHIRO128P}
RECORD_FIELDS = {XOROSHIRO128P.name: {"s0": UINT64, "s1": UINT64},  # a record's fields, read as states[i]["s0"]
                 BF16RAW.name: {"x": UINT16}}

SCALARS = {t.name: t for t in (BOOL, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, FLOAT16, FLOAT32,
                              FLOAT64, COMPLEX64, COMPLEX128)}
# Numba and NumPy aliases that users write in signatures and casts.
ALIASES = {
    "boolean": BOOL, "bool_": BOOL, "b1": BOOL,
    "i1": INT8, "i2": INT16, "i4": INT32, "i8": INT64, "intp": INT64, "intc": INT32, "int_": INT64,
    "u1": UINT8, "u2": UINT16, "u4": UINT32, "u8": UINT64, "uintp": UINT64, "uintc": UINT32, "byte": UINT8,
    "f4": FLOAT32, "f8": FLOAT64, "float_": FLOAT64, "double": FLOAT64, "single": FLOAT32,
    "f2": FLOAT16, "half": FLOAT16, "c8": COMPLEX64, "c16": COMPLEX128, "complex_": COMPLEX128, "csingle": COMPLEX64, "cdouble": COMPLEX128,
    # C's names, as numba.types (and NumPy, where it has them) spell them: a RANSAC library's `dtype=nb.size_t`
    "size_t": UINT64, "ssize_t": INT64, "uchar": UINT8, "short": INT16, "ushort": UINT16, "long_": INT64,
    "ulong": UINT64, "longlong": INT64, "ulonglong": UINT64, "uint": UINT64,
}

C_NAMES = {
    "bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "unsigned int", "uint64": "uint64_t",
    "float32": "float", "float64": "double", "xoroshiro128p_type": "n2c::xoroshiro128p_state",
    "complex64": "n2c::complex64", "complex128": "n2c::complex128", "float16": "__half", "bfloat16": "__nv_bfloat16",
    "fp8_e5m2": "__nv_fp8_e5m2", "fp8_e4m3": "__nv_fp8_e4m3", "fp8_e8m0": "__nv_fp8_e8m0",
    "bfloat16_raw": "__nv_bfloat16_raw",
}


def scalar_by_name(name: str) -> Scalar | None:
    return SCALARS.get(name) or ALIASES.get(name)


def c_name(t: Scalar) -> str:
    return getattr(t, "cname", "") or C_NAMES[t.name]  # a record: its struct


def int_of(bits: int, signed: bool) -> Scalar:
    return SCALARS[("int" if signed else "uint") + str(bits)]


def float_of(bits: int) -> Scalar:
    return SCALARS[f"float{bits}"]


# ---------------------------------------------------------------- type strings

class TypeStringError(ValueError):
    pass


class UnknownTypeName(TypeStringError):
    """A type spelt as a plain name that is not one of Numba's: a misspelling, or a name only the module gives (its
    structured dtype `particle`), which --types can name before the module is read."""


def _unknown(what: str, name: str) -> TypeStringError:
    kind = UnknownTypeName if re.fullmatch(r"[A-Za-z_]\w*", name) else TypeStringError
    return kind(f"unknown {what} '{name}'{why_unknown(name)}")


_ARRAY_RE = re.compile(r"^(\w+)\s*\[(.*)\]$")
# a misspelling, or a type a library registers with Numba (cudf's string and masked types), which has no C here
NOT_EXTENSIONS = " (numba2cuda knows Numba's own types, not those a library adds to Numba)"
RECORD = (" (a record's array field, Numba's nestedarray, which is read through its record: pass the record, "
          "or the field as an array of its own)")
DATETIME = (" (numba2cuda does not translate datetime64 and timedelta64 values; pass an array of them as its int64 view, "
            "a.view(np.int64), and compare the counts)")
STRINGS = (" (Numba's string types, such as UnicodeCharSeq, an element of a NumPy 'U' array, are not translated: "
           "pass the characters' codes as an integer array, a.view(np.uint32) of a '<U1' array or a.view(np.uint8) "
           "of an 'S1' one, and compare codes, ord('A'))")


BFLOAT16_ARRAYS = (" (numba2cuda translates bfloat16 values a kernel makes, numba.cuda.bf16's, but not arrays of them "
                   "as parameters, from ml_dtypes or CuPy: pass a float32 array and convert each element where it is "
                   "read)")


def why_unknown(text: str) -> str:
    """Why the type TEXT has no translation: Numba's own record and datetime types are said as what they are."""
    if "nestedarray(" in text and "Record(" not in text:
        return RECORD
    if re.search(r"(datetime|timedelta)|\b[mM]8\b", text, re.I):
        return DATETIME
    if re.search(r"\b(UnicodeCharSeq|CharSeq|unicode_type)\b|\[(unichr|char) x \d+\]", text):  # typeof: [unichr x 12]
        return STRINGS
    if re.search(r"\bbfloat16\b", text):
        return BFLOAT16_ARRAYS
    return NOT_EXTENSIONS


def parse_type(text: str) -> Scalar | Array | Tuple:
    """`float32[:, ::1]` -> Array(float32, 2, "C"); `int32` -> INT32 (Numba's own spelling); `UniTuple(int64, 2)`
    and `Tuple((int64, float32))` -> a Tuple of those scalars."""
    text = text.strip()
    if text.startswith("Record("):
        return _record_type(text)
    m = _ARRAY_RE.match(text)
    if not m:
        t = scalar_by_name(text)
        if t is None and re.match(r"^(Uni)?Tuple\s*\(", text):
            return parse_tuple_type(text)
        if t is None and re.match(r"^NamedTuple\s*\(", text):
            return parse_named_tuple(text)
        array = _ARRAY_CALL_RE.match(text)
        if t is None and array:  # Array(float64, 2, 'C'): Numba's array type by its constructor
            return _array_call(*array.groups())
        pointer = re.match(r"^CPointer\s*\(\s*(\w+)\s*\)$", text)
        if t is None and pointer:  # numba.types.CPointer(uint8): a raw pointer (numba-cuda's ex_cpointer)
            dtype = scalar_by_name(pointer.group(1))
            if dtype is None:
                raise TypeStringError(f"CPointer of unknown type '{pointer.group(1)}'{why_unknown(text)}")
            return Array(dtype, 1, "P")
        if t is None:
            raise _unknown("type", text)
        return t
    dtype = scalar_by_name(m.group(1)) or RECORDS.get(m.group(1))
    if dtype is None:
        raise _unknown("element type", m.group(1))
    return _array_of(dtype, m.group(1), m.group(2))


def _record_type(text: str):
    """`Record(...)` (a record argument) or `Record(...)[:]` (an array of them), as numba.typeof prints them."""
    depth = 0
    for end, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0 and ch == ")":
            break
    record, rest = parse_record(text[:end + 1]), text[end + 1:].strip()
    if not rest:
        return record
    if not (rest.startswith("[") and rest.endswith("]")):
        raise TypeStringError(f"cannot read '{text}': after a record type, only array dimensions such as [:]")
    return _array_of(record, "Record(...)", rest[1:-1])


def _array_of(dtype, shown: str, dims_text: str) -> Array:
    if dims_text.replace(" ", "") == "()":
        return Array(dtype, 0, "C")
    # `f8[:, ::]` is `f8[:, :]` to Numba (a slice with neither bounds nor step): a sum-rate model's signatures
    dims = [":" if d.replace(" ", "") == "::" else d.replace(" ", "") for d in dims_text.split(",")]
    if not all(d in (":", "::1") for d in dims):
        raise TypeStringError(f"array dimensions must be ':' or '::1' (or '()' for a 0-d array), got '[{dims_text}]'")
    if len(dims) > 1 and dims[0] == "::1" and all(d == ":" for d in dims[1:]):
        return Array(dtype, len(dims), "F")  # Fortran order: `np.asfortranarray(a)`, a transpose `a.T`
    if dims.count("::1") > 1 or "::1" in dims[1:-1]:
        raise TypeStringError("'::1' marks the one dimension whose elements are adjacent: the last (C order, "
                              f"{shown}[{', '.join([':'] * (len(dims) - 1) + ['::1'])}]) or the first (Fortran "
                              f"order, {shown}[{', '.join(['::1'] + [':'] * (len(dims) - 1))}])")
    layout = "C" if dims[-1] == "::1" else "A"
    return Array(dtype, len(dims), layout)


# Numba's repr adds its flags (`Array(float64, 1, 'C', readonly=False, aligned=True)`): an array's access, not
# its layout, so they are read and left (a readonly array is one the kernel does not write)
_ARRAY_CALL_RE = re.compile(r"""^(?:\w+\.)*Array\s*\(\s*(\w+)\s*,\s*(\d+)\s*,\s*['"](\w+)['"]\s*"""
                            r"""(?:,\s*(?:readonly|aligned)\s*=\s*(?:True|False)\s*)*\)$""")


def _array_call(dtype_name: str, ndim: str, layout: str) -> Array:
    dtype = scalar_by_name(dtype_name) or RECORDS.get(dtype_name)
    if dtype is None:
        raise _unknown("element type", dtype_name)
    if layout not in ("C", "A", "F"):
        raise TypeStringError(f"Array({dtype_name}, {ndim}, '{layout}'): Numba's layouts are 'C' (row-major), 'F' "
                              "(column-major) and 'A' (any)")
    if int(ndim) <= 1 and layout == "F":  # one dimension: column-major is contiguous, as C
        layout = "C"
    if int(ndim) == 0:
        return Array(dtype, 0, "C")
    return Array(dtype, int(ndim), layout)


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split on `sep` outside brackets and parentheses."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return [p.strip() for p in parts]


def parse_signature(text: str) -> tuple[Scalar | Void | Tuple | None, list[Scalar | Array]]:
    """`void(float32[:, :], int32)` -> (VOID, [...]); `(float32, int32)` and `float32, int32` -> (None, [...]);
    `UniTuple(float32, 2)(float32)` -> (Tuple((FLOAT32, FLOAT32)), [FLOAT32])."""
    text = text.strip()
    if why_unknown(text) == RECORD:  # Numba's record spelling has ';' and '[type=...]': no grammar reads it
        raise TypeStringError(f"cannot read signature '{text}'{RECORD}")
    parts = split_top_level(text)
    if len(parts) > 1 or (parts and text.endswith(",")):  # Numba evaluates "int32[:], int64" to a tuple of args
        return None, [parse_type(p) for p in parts]
    opening = _opening_of_last(text)
    if opening is None or not re.match(r"^[\w\s\[\]:,()]*$", text[:opening]):
        raise TypeStringError(f"cannot read signature '{text}'; write e.g. 'void(float32[:, ::1], int32)'")
    ret_name, body = text[:opening].strip(), text[opening + 1:-1]
    ret = None
    if ret_name in ("void", "none", "None"):
        ret = VOID
    elif ret_name:
        ret = parse_return_type(ret_name)
    return ret, [parse_type(p) for p in split_top_level(body)]


def _opening_of_last(text: str) -> int | None:
    """Where the parenthesis that closes TEXT opens: `UniTuple(float32, 2)(float32)` -> 20, the arguments'
    (a record's type, `Record(d[type=nestedarray(uint8, (5,));...])`, nests its own)."""
    if not text.endswith(")"):
        return None
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return None


def parse_return_type(text: str):
    """A device function's return type: a scalar, or UniTuple(t, n) / Tuple((t1, t2, ...)) of scalars."""
    ret = parse_type(text)
    if isinstance(ret, Array) or (isinstance(ret, Tuple) and any(isinstance(t, Array) for t in ret.items)):
        raise TypeStringError("functions cannot return arrays")
    return ret


def parse_tuple_type(text: str) -> Tuple:
    """UniTuple(t, n) / Tuple((t1, t2, ...)) of scalars (a result, or a parameter that takes a Python tuple), spelt
    as Numba's signature parser takes them: Tuple's one argument is a tuple of types."""
    m = re.match(r"^(UniTuple|Tuple)\s*\((.*)\)$", text.strip(), re.S)
    if m is None:  # `UniTuple(int64 x 3) int64`: a comma missing between items
        raise TypeStringError(f"'{text}' is not one type: a tuple type's parentheses balance and its items are "
                              "separated by commas")
    parts = split_top_level(m.group(2).strip())
    if m.group(1) == "UniTuple":
        if len(parts) != 2 or not parts[1].isdigit():
            raise TypeStringError(f"UniTuple takes a type and a count, got '{text}'")
        items = [parse_type(parts[0])] * int(parts[1])
    else:
        if len(parts) != 1 or not parts[0].startswith(("(", "[")):  # Numba: "Tuple.__new__() takes 2 positional
            # arguments"; a list of types is one argument too (Tuple([boolean, float64]), an ODE solver's result)
            spelt = ", ".join(parts) + ("," if len(parts) == 1 else "") if any(parts) else "int64, float32"
            raise TypeStringError(f"'{text}': Numba spells a tuple of types Tuple(({spelt})) (one argument, a tuple), "
                                  f"or UniTuple(t, n) when all items share a type; '{text}' fails in Numba")
        parts = [p for p in split_top_level(parts[0][1:-1]) if p.strip()]  # `Tuple(())`: the empty tuple
        items = [parse_type(p) for p in parts]
    if not all(isinstance(t, (Scalar, Array, Tuple)) for t in items):
        raise TypeStringError(f"'{text}': a tuple type here holds numbers, arrays or tuples of them")
    return Tuple(tuple(items))


def parse_named_tuple(text: str) -> Tuple:
    """`NamedTuple(x=int64, y=int64, r=float64)`: a namedtuple of those fields (numba2cuda's spelling of Numba's
    NamedTuple, whose own printing omits the field names the kernel reads)."""
    inner = text.strip()[len("NamedTuple"):].strip()[1:-1]
    names, items = [], []
    for part in split_top_level(inner):
        m = re.match(r"^\s*([A-Za-z_]\w*)\s*=(.+)$", part, re.S)
        if not m:
            raise TypeStringError(f"'{text}': a NamedTuple lists its fields as name=type, e.g. NamedTuple(x=int64, "
                                  "y=float64)")
        names.append(m.group(1))
        items.append(parse_type(m.group(2)))
    if not items or not all(isinstance(t, (Scalar, Array)) for t in items):
        raise TypeStringError(f"'{text}': a NamedTuple here holds one or more numbers or arrays")
    return Tuple(tuple(items), tuple(names))


def from_printed(text: str) -> str:
    """numba.typeof's printing of an array or a tuple type, which a user copies into --types, as a signature
    spells it: `array(float32, 2d, C)` -> `float32[:, ::1]`, `UniTuple(int64 x 3)` -> `UniTuple(int64, 3)`,
    `Tuple(UniTuple(int64 x 3), int64)` -> `Tuple((UniTuple(int64, 3), int64))`. Anything else is returned as
    it is."""
    array = re.match(r"^\s*(?:(?:readonly|unaligned)\s+)*array\s*\((.*)\)\s*$", text, re.S)
    if array is not None:
        parts = split_top_level(array.group(1))
        dims = re.match(r"^(\d+)d$", parts[1]) if len(parts) == 3 else None
        if dims is None or parts[2] not in ("C", "F", "A"):
            return text
        ndim = int(dims.group(1))
        if ndim == 0:
            return f"{from_printed(parts[0])}[()]"
        spelt = [":"] * ndim
        if parts[2] != "A":
            spelt[-1 if parts[2] == "C" else 0] = "::1"
        return f"{from_printed(parts[0])}[{', '.join(spelt)}]"
    m = re.match(r"^\s*(UniTuple|Tuple)\s*\((.*)\)\s*$", text, re.S)
    if m is None:
        return text
    inner = m.group(2).strip()
    if m.group(1) == "UniTuple":
        printed = re.match(r"^(.*)\s+x\s+(\d+)$", inner, re.S)
        return f"UniTuple({from_printed(printed.group(1))}, {printed.group(2)})" if printed else text
    if inner.startswith(("(", "[")):
        return text
    parts = split_top_level(inner)
    return f"Tuple(({', '.join(from_printed(p) for p in parts)}{',' if len(parts) == 1 else ''}))"


def parse_types_option(text: str, spellings: dict | None = None) -> dict[str, Scalar | Array]:
    """`m=float32[:,:], tw=int32` (the --types grammar) -> {name: type}; SPELLINGS: names a module gives types
    (its structured dtypes) -> their type strings. A tuple may be written as numba.typeof prints it too."""
    out = {}
    for part in split_top_level(text):
        if "=" not in part:
            raise TypeStringError(f"expected name=type, got '{part}'")
        name, ty = part.split("=", 1)
        if spellings:
            ty = re.sub(r"^\s*([A-Za-z_][\w.]*)", lambda m: spellings.get(m.group(1), m.group(1)), ty)
        try:
            out[name.strip()] = parse_type(from_printed(ty))
        except TypeStringError as exc:  # say which parameter: a spec names several
            raise type(exc)(f"{name.strip()}: {exc}") from None
    return out


# ---------------------------------------------------------------- records

# A record's name is Numba's own spelling of it (`Record(x[type=float32;offset=0],...;14;False)`, what
# numba.typeof prints inside `array(...)`): it carries every offset and the size, so a type string alone rebuilds
# the layout, and two dtypes with one layout are one type, as in Numba. records.py lays them out.

@dataclass(frozen=True)
class Nested:
    """A field that is a fixed-shape array inside the record (`("h", np.float32, 2)`): Numba's nestedarray."""
    dtype: Scalar
    shape: tuple

    def __str__(self) -> str:
        return f"nestedarray({self.dtype}, {self.shape!r})"


@dataclass(frozen=True)
class Record(Scalar):
    fields: tuple = ()  # ((name, Scalar | Nested, byte offset), ...) in NumPy's order
    size: int = 0  # NumPy's itemsize, padding included
    aligned: bool = False  # NumPy's align=True (C's layout); packed otherwise
    cname: str = field(default="", compare=False)  # the C struct's name: the module's name for the dtype, if known

    def field_type(self, name: str):
        return next((t for n, t, _ in self.fields if n == name), None)

    @property
    def names(self) -> list:
        return [n for n, _, _ in self.fields]


_FIELD_START_RE = re.compile(r"(\w+)\[type=")


def _fields(text: str):
    """(name, type text, offset) of each `name[type=T;offset=N]`, T itself perhaps a record with its own brackets."""
    at = 0
    while True:
        m = _FIELD_START_RE.search(text, at)
        if not m:
            return
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"[": 1, "]": -1}.get(text[i], 0)
            i += 1
        inner = text[m.end():i - 1]
        type_text, _, offset = inner.rpartition(";offset=")
        yield m.group(1), type_text, offset if offset.isdigit() else "0"
        at = i


def parse_record(text: str, cname: str = "") -> Record:
    """`Record(a[type=float64;offset=0],b[type=int32;offset=8];16;True)` (Numba's str of a record type)."""
    m = re.match(r"^Record\((.*);(\d+);(True|False)\)$", text.strip(), re.S)
    if not m:
        raise TypeStringError(f"cannot read record type '{text}': write it as Numba prints it, "
                              "Record(name[type=T;offset=N],...;SIZE;ALIGNED), as in numba.typeof(a)")
    fields = []
    for name, type_text, offset in _fields(m.group(1)):
        fields.append((name, _field_type(name, type_text.strip()), int(offset)))
    if not fields:
        raise TypeStringError(f"record type '{text}' has no fields numba2cuda can read")
    return make_record(fields, int(m.group(2)), m.group(3) == "True", cname)


def _field_type(name: str, text: str):
    nested = re.match(r"^nestedarray\((\w+),\s*\(([\d,\s]*)\)\)$", text)
    if nested:
        dtype = scalar_by_name(nested.group(1))
        shape = tuple(int(d) for d in nested.group(2).split(",") if d.strip())
        if dtype is not None and shape:
            return Nested(dtype, shape)
    t = scalar_by_name(text)
    if t is None:
        raise TypeStringError(f"record field '{name}' has the type '{text}', which numba2cuda does not translate "
                              "inside a record (numbers, booleans, complex numbers and fixed-shape arrays of them "
                              "are); pass that field as an array of its own")
    return t


def make_record(fields, size: int, aligned: bool, cname: str = "") -> Record:
    body = ",".join(f"{n}[type={t};offset={o}]" for n, t, o in fields)
    name = f"Record({body};{size};{aligned})"
    return Record(name, "r", size * 8, tuple(fields), size, aligned,
                  cname or "record_" + hashlib.sha1(name.encode()).hexdigest()[:8])


# ---------------------------------------------------------------- Numba's typing rules

def underlying(t: Scalar) -> Scalar:
    """The float type of a complex type's parts."""
    return FLOAT32 if t == COMPLEX64 else FLOAT64


def complex_of(f: Scalar) -> Scalar:
    return COMPLEX64 if f == FLOAT32 else COMPLEX128


def _int_float_bits(t: Scalar) -> int:
    """The narrowest float an integer (or bool) converts to safely in Numba's overload resolution: bool and int8
    fit a float16, uint8 and int16 a float32, anything wider only a float64 (numba's typeconv rules)."""
    if t.is_float:
        return t.bits
    if t.kind == "b" or t == INT8:
        return 16
    return 32 if t in (UINT8, INT16) else 64


def _float_operator(a: Scalar, b: Scalar, narrowest: int) -> Scalar:
    # The overload Numba picks is the narrowest float signature both operands convert to safely. numba-cuda
    # registers + - * / for float16 too; //, % and ** start at float32.
    return float_of(max(narrowest, _int_float_bits(a), _int_float_bits(b)))


def _complex_arith(a: Scalar, b: Scalar) -> Scalar:
    # complex64 with float32 (or bool, int8, uint8, int16) stays complex64; anything wider makes it complex128
    parts = [underlying(t) if t.is_complex else t for t in (a, b)]
    return complex_of(_float_operator(*parts, 32))


def _machine_int(*ts: Scalar) -> Scalar:
    # Numba's integer NBEP: integer arithmetic happens at 64 bits, signed if any input is.
    return int_of(max(64, *(t.bits for t in ts)), any(t.kind == "i" or t.kind == "b" for t in ts))


def _as_numeric(t: Scalar) -> Scalar:
    return INT64 if t.kind == "b" else t


def arith_result(a: Scalar, b: Scalar, op: str = "+") -> Scalar:
    """+ - * // % between scalars, as Numba types them: float32 * uint8 is float32, float32 * uint16 float64."""
    if a.is_complex or b.is_complex:
        return _complex_arith(a, b)
    if a.is_float or b.is_float:
        return _float_operator(a, b, 16 if op in ("+", "-", "*", "/") else 32)
    return _machine_int(_as_numeric(a), _as_numeric(b))


def truediv_result(a: Scalar, b: Scalar) -> Scalar:
    if a.is_complex or b.is_complex or a.is_float or b.is_float:
        return arith_result(a, b, "/")
    return FLOAT64


def pow_result(a: Scalar, b: Scalar) -> Scalar:
    if a.is_complex or b.is_complex:
        return arith_result(a, b)
    if a.is_float and b.kind in "iub":
        return float_of(max(32, a.bits))  # float32 ** int stays float32 (Numba avoids double precision here)
    if a.kind == "b" and b == INT32:
        return FLOAT32  # numba-cuda's pow(float32, int32) is the nearer overload for a bool base (bool -> float32 is safe)
    return arith_result(a, b, "**")


def shift_result(a: Scalar) -> Scalar:
    return int_of(max(64, a.bits), a.kind != "u")


def bitwise_result(a: Scalar, b: Scalar) -> Scalar:
    if a.kind == "b" and b.kind == "b":
        return BOOL
    return _machine_int(_as_numeric(a), _as_numeric(b))


def unary_result(op: str, a: Scalar) -> Scalar:
    if op == "not":
        return BOOL
    if op == "~":
        return BOOL if a.kind == "b" else _machine_int(a)
    if a.is_float or a.is_complex:
        return a
    return _machine_int(_as_numeric(a))


def compare_common(a: Scalar, b: Scalar) -> Scalar:
    """The type both operands of a comparison are converted to: NumPy's promotion for integers, so a uint64
    compared with a signed integer (a literal too) is compared as float64, as Numba compiles it."""
    if a.is_float or b.is_float or a.is_complex or b.is_complex:
        return arith_result(a, b)
    return unify(a, b)


_PROMOTE_ORDER = ["b", "u", "i", "f"]


def unify(a, b):
    """Type of a variable (or a conditional expression) given two of its values: NumPy promotion."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    if not (isinstance(a, Scalar) and isinstance(b, Scalar)) or BFLOAT16 in (a, b) or "q" in (a.kind, b.kind):
        raise TypeError(f"cannot unify {a} and {b}")  # bfloat16 and FP8 convert to nothing implicitly
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    if a.is_complex or b.is_complex:
        return complex_of(unify(*(underlying(t) if t.is_complex else t for t in (a, b))))
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            return a if a.bits >= b.bits else b
        other = b if a.is_float else a
        flt = a if a.is_float else b
        # NumPy's promotion: the narrowest float holding every value of the integer exactly
        return float_of(max(flt.bits, {8: 16, 16: 32}.get(other.bits, 64)))
    if a.kind == b.kind:
        return a if a.bits >= b.bits else b
    s, u = (a, b) if a.kind == "i" else (b, a)
    if s.bits > u.bits:
        return s
    if u.bits < 64:
        return int_of(min(64, u.bits * 2), True)
    return FLOAT64


# ---------------------------------------------------------------- C's usual arithmetic conversions

def c_promote(t: Scalar) -> Scalar:
    """Integer promotion: anything narrower than int becomes int."""
    if t.kind in "iub" and t.bits < 32:
        return INT32
    return t


def c_common(a: Scalar, b: Scalar) -> Scalar | None:
    """The type a C binary arithmetic operator computes in (None: complex operands of different types, which
    C++ does not mix: the legalizer converts them)."""
    if a.is_complex or b.is_complex or FLOAT16 in (a, b):
        return a if a == b else None  # __half mixes with nothing in C++ (ambiguous): the legalizer converts
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            return a if a.bits >= b.bits else b
        return a if a.is_float else b
    a, b = c_promote(a), c_promote(b)
    if a.kind == b.kind:
        return a if a.bits >= b.bits else b
    s, u = (a, b) if a.kind == "i" else (b, a)
    if u.bits >= s.bits:
        return u
    return s
