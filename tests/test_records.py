"""Records (elements of NumPy structured dtypes), as public projects pass particles, cells and hits to kernels:
each field at NumPy's offset in a C struct the compiler checks, `r = a[i]` a reference into the array, a record
argument copied in and back out, and a layout that differs from the parameter's refused at the launch."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from translator import translate_file, translate_source
from translator.errors import UserError
from translator.ir.records import from_numpy, numpy_dtype
from translator.ir.typesys import parse_record
from translator.lower.program import Options
from translator.runtime.cpu_launch import load_cpu
from translator.runtime.launch_checks import record_spelling
from translator.verify.compare import compare_arrays, first_bit_difference

ROOT = Path(__file__).resolve().parents[1]

PARTICLES = '''
import numpy as np
from numba import cuda

particle = np.dtype([("x", np.float32), ("y", np.float32), ("vx", np.float32), ("vy", np.float32),
                     ("mass", np.float64)])


@cuda.jit
def step(ps, dt):
    i = cuda.grid(1)
    if i < ps.shape[0]:
        p = ps[i]
        p.x += p.vx * dt
        ps[i]["y"] = ps[i]["y"] + ps[i].vy * dt
        if p.x > 0.5:
            p["mass"] *= 0.5
            ps[i] = ps[0]
'''

RT = np.dtype([("a", np.float64), ("b", np.int32), ("c", np.float32)], align=True)
RECORD_ARGUMENTS = '''
import numpy as np
from numba import cuda, float64, int32, void, from_dtype

rt = np.dtype([("a", np.float64), ("b", np.int32), ("c", np.float32)], align=True)
rec = from_dtype(rt)


@cuda.jit(void(rec, float64))
def set_a(r, v):
    r.a = v
    r["b"] += 2


@cuda.jit(device=True)
def energy(p):
    return p.a * p.c


@cuda.jit(void(rec[::1], float64[::1]))
def energies(ary, out):
    i = cuda.grid(1)
    if i < ary.size:
        out[i] = energy(ary[i])
'''


def particles(n, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype([("x", np.float32), ("y", np.float32), ("vx", np.float32), ("vy", np.float32),
                      ("mass", np.float64)])
    ps = np.zeros(n, dtype)
    for f in ("x", "y", "vx", "vy"):
        ps[f] = rng.uniform(-1.0, 1.0, n)
    ps["mass"] = rng.uniform(1.0, 2.0, n)
    return ps


# ------------------------------------------------------------------ types

@pytest.mark.parametrize("dtype", [
    np.dtype([("a", np.float64), ("b", np.int32), ("c", np.complex64), ("d", (np.uint8, 5))], align=True),
    np.dtype([("x", "f4"), ("y", "f8"), ("n", "i2"), ("ok", "?")]),
    np.dtype([("i", np.int32), ("j", np.float32, (3, 2))]),
    np.dtype({"names": ["a", "b"], "formats": ["i4", "f8"], "offsets": [0, 16], "itemsize": 32}),
], ids=["aligned-nested", "packed", "2d-field", "explicit-offsets"])
def test_a_record_type_is_spelled_as_numba_spells_it_and_gives_numpys_layout_back(dtype):
    numba = pytest.importorskip("numba")
    spelled = str(numba.from_dtype(dtype))
    record = from_numpy(dtype)
    assert record.name == spelled == record_spelling(dtype)  # the runtime's check spells it the same, without Numba
    assert parse_record(spelled) == record
    assert numpy_dtype(record) == dtype


# ------------------------------------------------------------------ translation

def test_a_record_array_is_a_struct_at_numpys_offsets_named_as_the_module_names_its_dtype():
    """Before, `--types` refused records ("a record ... which numba2cuda does not translate") and `ps[i].x` was
    "attribute .x: only arrays ... have attributes here"."""
    cu = translate_source(PARTICLES, "particles.py", Options(types_text="ps=particle[:], dt=float32"))
    assert "struct particle {" in cu and "static_assert(offsetof(particle, mass) == 16" in cu
    assert "__global__ void step(particle *ps, int64_t ps_shape0, float dt)" in cu
    assert "particle *p = ps + i;" in cu and "p->x += p->vx * dt;" in cu and "ps[i] = ps[0];" in cu


def test_numbas_own_spelling_and_a_signature_built_with_from_dtype_are_read():
    spelled = str(from_numpy(RT).name)
    spelling = f"ps={from_numpy(particles(1).dtype).name}[:], dt=float32"
    by_spelling = translate_source(PARTICLES.replace("particle = np.dtype", "other = np.dtype"), "p.py",
                                   Options(types_text=spelling))
    assert "struct other {" in by_spelling  # the module's name for that layout
    unnamed = "\n".join(line for line in PARTICLES.splitlines() if "np.dtype" not in line and "np.float64)])" not in
                        line)
    assert "struct record_" in translate_source(unnamed, "p.py", Options(types_text=spelling))  # a name from it
    cu = translate_source(RECORD_ARGUMENTS, "r.py")
    assert "struct rt {" in cu and spelled.startswith("Record(a[type=float64;offset=0]")
    assert "__global__ void set_a(rt *r, double v)" in cu and "r->a = v;" in cu
    assert "__device__ double energy(const rt *p)" in cu and "out[i] = energy(ary + i);" in cu


def test_a_packed_dtype_is_a_packed_struct_and_a_field_off_its_alignment_is_refused_as_numba_refuses_it():
    src = textwrap.dedent('''
        import numpy as np
        from numba import cuda
        tagged = np.dtype([("tag", np.int8), ("value", np.float64), ("z", np.complex64)])

        @cuda.jit
        def k(t, out):
            i = cuda.grid(1)
            if i < t.size:
                out[i] = t[i].value + t[i].tag
    ''')
    cu = translate_source(src.replace("t[i].value + ", ""), "t.py", Options(types_text="t=tagged[:], out=float64[:]"))
    assert "struct __attribute__((packed)) tagged {" in cu and "static_assert(offsetof(tagged, value) == 1" in cu
    assert "unsigned char z[8];" in cu
    # numba-cuda: "Record(...).value of type float64 is not aligned" (measured on the H200): refused here too
    with pytest.raises(UserError, match=r"(?s)t.py:10:\d+: error: the field 't\[i\].value'.*offset 1.*align=True"):
        translate_source(src, "t.py", Options(types_text="t=tagged[:], out=float64[:]"))
    # a complex64 at offset 4: aligned for Numba (its floats'), not for numba2cuda's 8-byte complex struct
    complex_at_4 = src.replace('[("tag", np.int8), ("value", np.float64), ("z", np.complex64)]',
                               '[("n", np.int32), ("w", np.complex64)]')
    with pytest.raises(UserError, match=r"(?s)t.py:10:\d+: error: the field 't\[i\].w'.*complex type"):
        translate_source(complex_at_4.replace("t[i].value + t[i].tag", "t[i].w.real"), "t.py",
                         Options(types_text="t=tagged[:], out=float64[:]"))


@pytest.mark.parametrize("body, message", [
    ("out[i] = ps[i].speed", r"(?s)record field 'speed'.*the record has the fields x, y, vx, vy, mass"),
    ("out[i] = ps.x[i]", r"(?s)'ps.x', a field of every record.*index first: ps\[i\].x"),
    ("out[i] = ps[i][0]", r"(?s)record subscript.*a field's name"),
])
def test_a_record_read_numba2cuda_does_not_translate_is_a_located_error(body, message):
    src = PARTICLES.split("@cuda.jit")[0] + textwrap.dedent(f'''
        @cuda.jit
        def k(ps, out):
            i = cuda.grid(1)
            {body}
    ''')
    with pytest.raises(UserError, match=message):
        translate_source(src, "k.py", Options(types_text="ps=particle[:], out=float64[:]"))


def test_types_naming_a_dtype_the_module_lacks_says_which_it_has(tmp_path):
    path = tmp_path / "particles.py"
    path.write_text(PARTICLES)
    run = subprocess.run([sys.executable, "-m", "translator.cli", "translate", str(path), "-o", "-", "--types",
                          "ps=particel[:], dt=float32"], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "unknown element type 'particel'" in run.stderr and "structured dtypes: particle" in run.stderr
    ok = subprocess.run([sys.executable, "-m", "translator.cli", "translate", str(path), "-o", "-", "--types",
                         "ps=particle[:], dt=float32"], capture_output=True, text=True, timeout=300,
                        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert ok.returncode == 0, ok.stderr
    assert "struct particle {" in ok.stdout


def test_the_import_mode_types_a_record_kernel_from_its_launch(tmp_path):
    """A script that launches its kernel on a record array: the import mode takes the types of that launch
    (Numba's record type, which the probe used to report as an unsupported value) and names the struct as the
    script names its dtype."""
    pytest.importorskip("numba")
    path = tmp_path / "sim.py"
    path.write_text(PARTICLES + textwrap.dedent('''
        if __name__ == "__main__":
            ps = np.zeros(100, dtype=particle)
            step[1, 128](ps, np.float32(0.1))
    '''))
    cu = translate_file(path, Options(import_module="sim"))
    assert "__global__ void step(particle *ps, int64_t ps_shape0, float dt)" in cu


# ------------------------------------------------------------------ the CPU runtime

@pytest.mark.needs("g++")
def test_records_run_on_the_cpu_runtime_as_numba_runs_them():
    module = load_cpu(source=PARTICLES, options=Options(types_text="ps=particle[:], dt=float32"))
    ps = particles(64)
    want = ps.copy()
    want["x"] = ps["x"] + ps["vx"] * np.float32(0.1)
    want["y"] = ps["y"] + ps["vy"] * np.float32(0.1)
    moved = want["x"] > 0.5
    want["mass"][moved] *= 0.5
    want[moved] = want[0]  # thread 0 never moves its particle's x past 0.5 here
    assert not moved[0]
    module.step[2, 32](ps, np.float32(0.1))
    assert ps.tobytes() == want.tobytes()
    with pytest.raises(TypeError, match=r"argument 'ps' must be array\(Record\(x\[type=float32;offset=0\]"):
        module.step[2, 32](np.zeros(4, np.dtype([("x", "f4"), ("y", "f4")])), np.float32(0.1))


@pytest.mark.needs("g++")
def test_a_record_argument_is_passed_by_reference_and_copied_back():
    module = load_cpu(source=RECORD_ARGUMENTS)
    arr = np.zeros(3, RT)
    arr["c"] = [1.0, 2.0, 3.0]
    module.set_a[1, 1](arr[1], 2.5)  # an element of the array: Numba writes the kernel's changes back into it
    assert arr[1]["a"] == 2.5 and arr[1]["b"] == 2 and arr[0]["a"] == 0.0
    out = np.zeros(3)
    module.energies[1, 32](arr, out)
    assert np.array_equal(out, arr["a"] * arr["c"].astype(np.float64))


@pytest.mark.needs("g++")
def test_shared_and_local_arrays_of_records():
    """numba-cuda's test_sm stages records in shared memory (`cuda.shared.array(n, dtype=from_dtype(...))`); a
    local array of them too. Both names of one layout (the dtype and its Numba type) are one struct."""
    src = textwrap.dedent('''
        import numpy as np
        from numba import cuda, from_dtype

        pair = np.dtype([("k", np.int32), ("v", np.float32)], align=True)
        pair_t = from_dtype(pair)

        @cuda.jit("void(float32[::1], int32[::1], float32[::1])")
        def stage(v, k, out):
            i = cuda.grid(1)
            t = cuda.threadIdx.x
            sm = cuda.shared.array(32, dtype=pair_t)
            loc = cuda.local.array(2, dtype=pair)
            sm[t].k = k[i]
            sm[t].v = v[i]
            cuda.syncthreads()
            loc[0] = sm[31 - t]
            loc[1].v = loc[0].v * 2.0
            out[i] = loc[1].v + loc[0].k
    ''')
    module = load_cpu(source=src)
    assert "__shared__ pair sm[32];" in module.cu and "pair loc[2];" in module.cu and "pair_t" not in module.cu
    v, k = np.arange(64, dtype=np.float32) / 4, np.arange(64, dtype=np.int32) * 3
    out = np.zeros(64, np.float32)
    module.stage[2, 32](v, k, out)
    partner = (np.arange(64) // 32) * 32 + 31 - np.arange(64) % 32
    assert np.array_equal(out, (v[partner] * 2.0).astype(np.float32) + k[partner])


# ------------------------------------------------------------------ verify's comparison

def test_records_are_compared_field_by_field_and_the_padding_is_no_ones():
    dtype = np.dtype([("alive", np.bool_), ("w", np.float64)], align=True)
    expected = np.zeros(5, dtype)
    expected["w"] = [1.0, 2.0, 3.0, 4.0, 5.0]
    actual = expected.copy()
    actual.view(np.uint8).reshape(5, 16)[:, 1:8] = 0xAB  # padding after the bool
    assert first_bit_difference(expected, actual) is None
    assert compare_arrays(expected, actual).ok
    actual["w"][3] = 4.5
    report = compare_arrays(expected, actual)
    assert not report.ok and report.first_index == (3, "w") and report.mismatches == 1
    assert "index (3, 'w'): expected 4, got 4.5" in report.describe_first()


# ------------------------------------------------------------------ the GPU

@pytest.mark.gpu
def test_gpu_records_match_numbas_from_numpy_numba_and_torch(tmp_path):
    """On the GPU, the translation of record kernels against Numba's own: a NumPy record array (copied and back),
    a Numba device array of records, their bytes as a torch tensor, a packed dtype's misaligned float64, and a
    record argument whose writes Numba copies back into its array."""
    import torch
    from numba import cuda

    import numba2cuda
    from translator.userimport import import_path

    fixture = Path(__file__).parent / "verify_fixtures" / "real_world_constructs_6.py"
    original, translated = import_path(str(fixture)), numba2cuda.load(fixture, progress=False)
    ps = particles(1000, seed=3)
    want = cuda.to_device(ps)
    original.step[8, 128](want, np.float32(0.1), 0.5)
    want = want.copy_to_host()
    got = ps.copy()
    translated.step[8, 128](got, np.float32(0.1), 0.5)
    assert got.tobytes() == want.tobytes()
    on_device = cuda.to_device(ps)
    translated.step[8, 128](on_device, np.float32(0.1), 0.5)
    assert on_device.copy_to_host().tobytes() == want.tobytes()
    as_bytes = torch.from_numpy(ps.view(np.uint8).reshape(1000, ps.dtype.itemsize).copy()).cuda()
    translated.step[8, 128](as_bytes, np.float32(0.1), 0.5)
    torch.cuda.synchronize()
    assert as_bytes.cpu().numpy().tobytes() == want.tobytes()
    with pytest.raises(TypeError, match=r"argument 'ps' must be array\(Record\("):
        translated.step[8, 128](np.zeros(10, np.dtype([("x", "f4")])), np.float32(0.1), 0.5)

    rng = np.random.default_rng(4)
    tags, values = rng.integers(-5, 5, 999).astype(np.int8), rng.uniform(-1, 1, 999)
    counts = rng.integers(0, 100, 999).astype(np.int16)
    expected = cuda.to_device(np.zeros(999, original.hit))
    original.pack[8, 128](tags, values, counts, expected)
    out = np.zeros(999, original.hit)
    translated.pack[8, 128](tags, values, counts, out)
    assert out.tobytes() == expected.copy_to_host().tobytes()

    path = tmp_path / "record_arguments.py"
    path.write_text(RECORD_ARGUMENTS)
    numba_module, module = import_path(str(path)), numba2cuda.load(path, progress=False)
    arr, numba_arr = np.zeros(3, RT), np.zeros(3, RT)
    numba_module.set_a[1, 1](numba_arr[1], 2.5)
    module.set_a[1, 1](arr[1], 2.5)
    assert arr.tobytes() == numba_arr.tobytes() and arr[1]["a"] == 2.5 and arr[1]["b"] == 2


@pytest.mark.needs("g++")
def test_a_records_array_field_is_indexed_element_by_element():
    """numba-cuda's record_write_array / record_read_2d_array: `r.h[0] = 3.0`, `r.j[a, b]`, `a[i]["j"][0, 0]`
    on fields that are fixed-shape arrays (Numba's nestedarray), a C array member of the struct. Before, an
    array field was "numba2cuda reads a record's number fields, not its array fields"."""
    src = textwrap.dedent('''
        import numpy as np
        from numba import cuda

        withh = np.dtype([("g", np.int32), ("h", np.float32, 2)], align=True)
        with2d = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])

        @cuda.jit
        def write(r, s):
            r.g = 2
            r.h[0] = 3.0
            r.h[-1] = 4.0
            for a in range(3):
                for b in range(2):
                    s.j[a, b] = a * 10 + b + r.h[b]

        @cuda.jit
        def read(ary, out):
            i = cuda.grid(1)
            if i < ary.shape[0]:
                out[i] = ary[i].j[2, 1] + ary[i]["j"][0, 0]
                ary[i].j[1, 1] += 1.0

        @cuda.jit
        def copy(src, dst):
            i = cuda.grid(1)
            if i < dst.shape[0]:
                dst[i]["j"] = src[src.shape[0] - 1 - i]["j"]
                dst[i].i = i
    ''')
    module = load_cpu(source=src, options=Options(types_text="r=withh, s=with2d, ary=with2d[:], out=float64[:], "
                                                             "src=with2d[:], dst=with2d[:]"))
    assert "float j[3][2];" in module.cu and "s->j[a][b] = " in module.cu and "r->h[1] = 4.0f;" in module.cu
    withh = np.dtype([("g", np.int32), ("h", np.float32, 2)], align=True)
    with2d = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])
    r, s = np.zeros(1, withh), np.zeros(1, with2d)
    module.write[1, 1](r[0], s[0])
    assert r[0]["g"] == 2 and list(r[0]["h"]) == [3.0, 4.0]
    assert np.array_equal(s[0]["j"], np.array([[10 * a + b + (3.0, 4.0)[b] for b in range(2)] for a in range(3)]))
    ary = np.zeros(4, with2d)
    ary["j"] = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    out = np.zeros(4)
    module.read[1, 32](ary, out)
    assert np.array_equal(out, np.arange(24).reshape(4, 3, 2)[:, 2, 1] + np.arange(24).reshape(4, 3, 2)[:, 0, 0])
    assert np.array_equal(ary["j"][:, 1, 1], np.arange(24, dtype=np.float32).reshape(4, 3, 2)[:, 1, 1] + 1)
    # numba-cuda's record copy test: a whole array field stored from another record's (was "used whole")
    dst = np.zeros(4, with2d)
    module.copy[1, 32](ary, dst)
    assert np.array_equal(dst["j"], ary["j"][::-1]) and dst["i"].tolist() == [0, 1, 2, 3]
    with pytest.raises(UserError, match="(?s)array field 'r.h'.*index it|a slice of the array field"):
        translate_source(src.replace("r.h[0] = 3.0", "r.h[:] = 3.0"), "n.py",
                         Options(types_text="r=withh, s=with2d, ary=with2d[:], out=float64[:], src=with2d[:], "
                                            "dst=with2d[:]"))


def test_a_record_argument_is_viewed_as_its_bytes_without_a_copy():
    """torch holds records as bytes; a record argument is a 0-d array, whose dtype NumPy changes only to one of
    its own size ("Changing the dtype of a 0d array is only supported if the itemsize is unchanged", raised by the
    drop-in's launch on the H200 before the view went through 1-D)."""
    pytest.importorskip("torch")
    from translator.runtime import launch
    from translator.runtime.launch_checks import Param

    held = np.zeros((), RT)
    units = launch._numpy_words("set_a", Param("r", from_numpy(RT).name + "[()]", written=True), held)
    assert units.shape == (RT.itemsize,) and units.dtype == np.uint8 and np.shares_memory(units, held)
    units[:8] = np.frombuffer(np.float64(2.5).tobytes(), np.uint8)
    assert held["a"] == 2.5


@pytest.mark.needs("g++")
def test_verify_takes_the_modules_dtype_name_in_types(tmp_path):
    """`verify --types "ps=particle[:]"` as translate takes it (verify parsed --types alone and refused the name)."""
    pytest.importorskip("numba")
    path = tmp_path / "pverify.py"
    path.write_text(textwrap.dedent('''
        import numpy as np
        from numba import cuda

        particle = np.dtype([("x", np.float32), ("vx", np.float32)])

        @cuda.jit
        def step(ps, dt):
            i = cuda.grid(1)
            if i < ps.shape[0]:
                ps[i].x += ps[i].vx * dt

        def example(rng, size="small"):
            ps = np.zeros(40, particle)
            ps["x"], ps["vx"] = rng.uniform(-1, 1, 40), rng.uniform(-1, 1, 40)
            return dict(kernel=step, griddim=2, blockdim=32, args=[ps, np.float32(0.5)], expected={0: None})
    '''))
    run = subprocess.run([sys.executable, "-m", "translator.cli", "verify", str(path), "--types",
                          "ps=particle[:], dt=float32"], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr
    assert "verdict: EQUIVALENT (step;" in run.stdout + run.stderr
