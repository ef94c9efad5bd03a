"""Records (typesys.Record: elements of a NumPy structured dtype) <-> NumPy dtypes and C structs: the layout at
NumPy's offsets, as a struct nvcc checks, and the dtype again for the runtimes."""

from __future__ import annotations

from .typesys import C_NAMES, Nested, Record, TypeStringError, make_record, scalar_by_name


def _alignment(t) -> int:
    """The alignment C gives T: its element's size (numba2cuda's complex structs are __align__ed to theirs)."""
    return max(1, getattr(t, "dtype", t).bits // 8)


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


def from_numpy(dtype, cname: str = "") -> Record:
    """A NumPy structured dtype as Numba types it (numba.from_dtype)."""
    if dtype.names is None:
        raise TypeStringError(f"{dtype} is not a structured dtype")
    fields = []
    for n in dtype.names:
        sub, offset = dtype.fields[n][:2]
        base = scalar_by_name(sub.base.name)
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
        return np.dtype(t.name)

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


__all__ = ["from_numpy", "numpy_dtype", "c_struct", "numba_alignment", "opaque"]
