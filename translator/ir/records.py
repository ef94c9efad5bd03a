"""Numba's record types (elements of a NumPy structured dtype) -> Record: fields at NumPy's offsets, a C struct
with that layout, and the NumPy dtype again for the runtimes.

A record's name is Numba's own spelling of it (`Record(x[type=float32;offset=0],...;14;False)`, what
`numba.typeof(a)` prints inside `array(...)`): it carries every offset and the size, so a type string alone
rebuilds the layout, and two dtypes with one layout are one type, as in Numba."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from .typesys import C_NAMES, Scalar, TypeStringError, scalar_by_name


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


def _alignment(t) -> int:
    """The alignment C gives T: complex numbers are numba2cuda's __align__ structs (8 and 16 bytes)."""
    if isinstance(t, Nested):
        return _alignment(t.dtype)
    if t.is_complex:
        return t.bits // 8
    return max(1, t.bits // 8)


def numba_alignment(t) -> int:
    """The alignment Numba's CUDA target requires of a field (LLVM's ABI alignment: a complex number's is its
    part's), below which it refuses to read or write it."""
    if isinstance(t, Nested):
        return numba_alignment(t.dtype)
    return max(1, t.bits // 16 if t.is_complex else t.bits // 8)


def _bytes(t) -> int:
    if isinstance(t, Nested):
        n = 1
        for d in t.shape:
            n *= d
        return n * _bytes(t.dtype)
    return max(1, t.bits // 8)


def _fields(text: str):
    """(name, type text, offset) of each `name[type=T;offset=N]`, T itself perhaps a record with its own brackets."""
    at = 0
    while True:
        m = re.compile(r"(\w+)\[type=").search(text, at)
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


def from_numpy(dtype, cname: str = "") -> Record:
    """A NumPy structured dtype as Numba types it (numba.from_dtype)."""
    if dtype.names is None:
        raise TypeStringError(f"{dtype} is not a structured dtype")
    fields = []
    for n in dtype.names:
        sub, offset = dtype.fields[n][:2]
        base = scalar_by_name(sub.base.name if sub.base.name != "bool" else "bool")
        if base is None or sub.base.names is not None:
            raise TypeStringError(f"record field '{n}' has the type {sub}, which numba2cuda does not translate "
                                  "inside a record; pass that field as an array of its own")
        fields.append((n, Nested(base, sub.shape) if sub.shape else base, offset))
    return make_record(fields, dtype.itemsize, bool(dtype.isalignedstruct), cname)


def numpy_dtype(record: Record):
    """The NumPy dtype with RECORD's layout: what the runtimes check an argument against and view its bytes as."""
    import numpy as np

    def one(t):
        if isinstance(t, Nested):
            return (one(t.dtype), t.shape)
        return np.dtype("complex64" if t.name == "complex64" else "bool" if t.name == "bool" else t.name)

    return np.dtype({"names": record.names, "formats": [one(t) for _, t, _ in record.fields],
                     "offsets": [o for _, _, o in record.fields], "itemsize": record.size,
                     "aligned": record.aligned})


def opaque(record: Record, name: str) -> bool:
    """A complex field off its C alignment (numba-cuda's own test record puts a complex64 at offset 12): nvcc
    cannot pack numba2cuda's complex struct, so the field is kept as its bytes and the kernel may not read it."""
    t = record.field_type(name)
    offset = next(o for n, _, o in record.fields if n == name)
    return not isinstance(t, Nested) and t.is_complex and offset % _alignment(t) != 0


def _c_member(record: Record, name: str, t) -> str:
    if opaque(record, name):
        return f"unsigned char {name}[{_bytes(t)}]; // a {t} at a misaligned offset: its bytes only"
    if isinstance(t, Nested):
        return f"{C_NAMES[t.dtype.name]} {name}{''.join(f'[{d}]' for d in t.shape)};"
    return f"{C_NAMES[t.name]} {name};"


def c_struct(record: Record) -> str:
    """The struct with NumPy's layout, asserted member by member. Where that layout is C's own (align=True, or
    fields that happen to fall at their alignment) the struct is plain; otherwise it is packed, and nvcc reads a
    misaligned member byte by byte, as Numba reads an unaligned record."""
    plain = all(o % _alignment(t) == 0 for _, t, o in record.fields) and record.size % _max_alignment(record) == 0
    lines, at, pads = [], 0, 0
    for name, t, offset in sorted(record.fields, key=lambda f: f[2]):
        if offset < at:
            raise TypeStringError(f"record field '{name}' overlaps the field before it (offset {offset}): "
                                  "numba2cuda lays records out without overlaps")
        if offset != (_round_up(at, _alignment(t)) if plain else at):  # a gap NumPy leaves (explicit offsets)
            lines.append(f"unsigned char pad{pads}_[{offset - at}];")
            pads += 1
        lines.append(_c_member(record, name, t))
        at = offset + _bytes(t)
    if record.size != _round_up(at, _max_alignment(record) if plain else 1):
        lines.append(f"unsigned char pad{pads}_[{record.size - at}];")
    s = record.cname
    head = f"struct {'__attribute__((packed)) ' if not plain else ''}{s} {{"
    layout = "C's layout" if plain else "packed: NumPy's layout is not C's"
    out = [f"// {record.name}", f"// {record.size} bytes, {layout}", head]
    out += ["    " + line for line in lines] + ["};"]
    out.append(f'static_assert(sizeof({s}) == {record.size}, "{s}: NumPy\'s itemsize");')
    out += [f'static_assert(offsetof({s}, {n}) == {o}, "{s}.{n}: NumPy\'s offset");' for n, _, o in record.fields]
    return "\n".join(out)


def _max_alignment(record: Record) -> int:
    return max(_alignment(t) for _, t, _ in record.fields)


def _round_up(n: int, a: int) -> int:
    return (n + a - 1) // a * a


__all__ = ["Nested", "Record", "parse_record", "make_record", "from_numpy", "numpy_dtype", "c_struct", "numba_alignment", "opaque"]
