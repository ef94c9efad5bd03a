"""`translate` compiles its own output before reporting success: CUDA C the compiler rejects is a numba2cuda defect,
reported at the Python line it came from, exit 70, nothing written; `--no-check` skips the check."""

from __future__ import annotations

import pytest

from translator.cli import main
from translator.errors import EXIT_INTERNAL
from translator.runtime import selfcheck

SOURCE = '''from numba import cuda


@cuda.jit("void(float32[::1])")
def twice(a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = 2 * a[i]
'''


@pytest.fixture
def module(tmp_path):
    path = tmp_path / "twice.py"
    path.write_text(SOURCE)
    return path


def broken_translation(monkeypatch):
    """Stands for a translator defect: the body statement of line 8 comes out as C that does not compile."""
    from translator.llm import backend

    real = backend.render_program

    def render(program, name):
        return real(program, name).replace("a[i] = 2.0 * a[i];", "a[i] = 2.0 * [i];")

    monkeypatch.setattr(backend, "render_program", render)


def test_a_translation_the_compiler_rejects_is_a_located_defect(module, tmp_path, capsys, monkeypatch):
    broken_translation(monkeypatch)
    out = tmp_path / "twice.cu"
    rc = main(["translate", str(module), "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == EXIT_INTERNAL == 70
    assert f"{module}:8:9: internal error: numba2cuda translated this into CUDA C that" in err
    assert "        a[i] = 2 * a[i]" in err and "--no-check" in err
    assert not out.exists()


def test_no_check_writes_it_anyway(module, tmp_path, capsys, monkeypatch):
    broken_translation(monkeypatch)
    out = tmp_path / "twice.cu"
    assert main(["translate", str(module), "-o", str(out), "--no-check"]) == 0
    assert "2.0 * [i]" in out.read_text()


def test_a_translation_that_compiles_is_written_and_remembered(module, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("NUMBA2CUDA_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "twice.cu"
    assert main(["translate", str(module), "-o", str(out)]) == 0
    assert list((tmp_path / "cache" / "selfcheck").iterdir())  # the marker: the next check costs nothing
    assert selfcheck.check_cu(out.read_text()).cached


def test_compiler_errors_map_to_python_lines():
    text = "\n".join(["// twice.py:4", "__global__ void twice(float *a)", "{",
                      "    int64_t i = 0;  // twice.py:6", "    a[i] = 2 * [i];  // twice.py:8", "}"])
    output = ("/tmp/x/translation.cu(5): error: expected an expression\n"
              "/tmp/x/translation.cu:3:1: error: something g++ says\n")
    problems = selfcheck.parse_errors(output, text)
    assert [(p.cu_line, p.py_line) for p in problems] == [(5, 8), (3, 4)]


@pytest.mark.needs("nvcc")
def test_a_variable_read_before_it_is_set_is_a_defect_to_nvcc():
    """nvcc only warns where a variable is read in its own initialiser (`for (int64_t i = i; ...)`, the old
    translation of a grid-stride loop over its own name), and warnings are off: such C is a translator defect."""
    text = "\n".join(["#include <cstdint>", "// walk.py:4", "__global__ void walk(float *a, int64_t n)", "{",
                      "    int64_t i = threadIdx.x;  // walk.py:6",
                      "    for (int64_t i = i; i < n; i += 32) {  // walk.py:7", "        a[i] = 1.0f;", "    }", "}"])
    outcome = selfcheck.check_cu(text)
    assert outcome.compiler == "nvcc"
    assert [p.py_line for p in outcome.problems] == [7], outcome


def test_translate_writes_a_device_function_named_alone_and_checks_it(tmp_path, capsys):
    """`translate --kernel f` of a @cuda.jit that returns a value, which only a kernel calls (numba-cuda's
    device-function tests), writes the __device__ function alone (it was exit 2), after the same compile check as
    any translation; --emit torch, which launches kernels, refuses it."""
    path = tmp_path / "dev.py"
    path.write_text('from numba import cuda\n\n\n@cuda.jit\ndef plus_one(x):\n    return x + 1\n\n\n'
                    '@cuda.jit\ndef kernel(r, x):\n    r[0] = plus_one(x[0])\n')
    out = tmp_path / "dev.cu"
    assert main(["translate", str(path), "--kernel", "plus_one", "--types", "x=int32", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "wrote" in err and "(1 device function: plus_one;" in err
    assert "note: kernel 'plus_one': returns a value" in err
    text = out.read_text()
    assert "__device__ int64_t plus_one(int x)" in text and "__global__" not in text
    torch_out = tmp_path / "dev_torch.py"
    assert main(["translate", str(path), "--kernel", "plus_one", "--types", "x=int32", "--emit", "torch",
                 "-o", str(torch_out)]) == 2
    assert "name 'kernel', which carries it" in capsys.readouterr().err and not torch_out.exists()


LINKED = '''from numba import cuda

helper = cuda.CUSource("""
extern "C" __device__ int twice(int *out, int a) { *out = 2 * a; return 0; }
""")
quad_src = cuda.CUSource("""
extern "C" __device__ int twice(int *out, int a);
extern "C" __device__ int quad(int *out, int a) { int t; twice(&t, a); *out = 2 * t; return 0; }
""")
quad = cuda.declare_device("quad", "int32(int32)", link=LINK)


@cuda.jit("void(int32[::1], int32[::1])")
def k(r, x):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = quad(x[i])
'''


@pytest.mark.needs("nvcc")
def test_linked_sources_given_as_a_set_and_a_gap_in_them_is_the_users(tmp_path, capsys):
    """numba-cuda's test_declare_device: link=set([a, b]) (or tuple([...])) of CUSource objects was read as one
    path ("numba2cuda reads paths made of strings"). And linked CUDA source that calls a function no linked
    source defines failed the self-check as "a bug in numba2cuda" (exit 70); Numba's link fails on it too, so
    it is the user's error (exit 2), located at that source, with nothing written."""
    out = tmp_path / "k.cu"
    for link in ("set([helper, quad_src])", "tuple([quad_src, helper])"):
        path = tmp_path / "k.py"
        path.write_text(LINKED.replace("LINK", link))
        assert main(["translate", str(path), "-o", str(out)]) == 0, capsys.readouterr().err
        assert "int quad(int *out, int a)" in out.read_text() and "*out = 2 * a;" in out.read_text()
        out.unlink()
    # numba-cuda's _test_link_multiple_sources(self, link_type): `link = link_type([...])`, link_type a parameter
    body = LINKED.split("quad = ")[1].replace("LINK", "link").replace("\n", "\n    ")
    path.write_text(LINKED.split("quad = ")[0] + "\n\ndef make(link_type):\n    link = link_type([helper, quad_src])\n"
                    "    quad = " + body)
    assert main(["translate", str(path), "--kernel", "make.k", "-o", str(out)]) == 0, capsys.readouterr().err
    out.unlink()
    path.write_text(LINKED.replace("LINK", "[quad_src]"))
    assert main(["translate", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:6:1: error: linked CUDA source (cuda.CUSource at k.py:6): nvcc rejects it: " in err
    assert "Unresolved extern function 'twice'" in err and "internal error" not in err and not out.exists()
    # a declared function that no linked source defines at all
    path.write_text(LINKED.replace('quad = cuda.declare_device("quad"', 'quint = cuda.declare_device("quint"')
                    .replace("LINK", "[helper]")
                    .replace("r[i] = quad(", "r[i] = quint("))
    assert main(["translate", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert 'error: linked CUDA source (cuda.declare_device("quint"), which no source it links defines)' in err
    assert "internal error" not in err and not out.exists()


@pytest.mark.needs("g++")
def test_a_macro_of_one_linked_source_reaches_neither_the_next_nor_the_kernel():
    """Numba compiles each linked source on its own. Pasted into one .cu, `#define SCALE 2` of the first reached
    the second (whose `#ifndef SCALE` default is 3) and `#define fabs(v) (v)` rewrote the kernel's math.fabs."""
    import numpy as np

    from translator.runtime.cpu_launch import load_cpu

    module = load_cpu(source='''from numba import cuda
import math
src_a = cuda.CUSource('#define SCALE 2\\n#define fabs(v) (v)\\n'
                      'extern "C" __device__ int fa(int *ret, int x) { *ret = x * SCALE; return 0; }')
src_b = cuda.CUSource('#ifndef SCALE\\n#define SCALE 3\\n#endif\\n'
                      'extern "C" __device__ int fb(int *ret, int x) { *ret = x * SCALE; return 0; }')
fa = cuda.declare_device("fa", "int32(int32)", link=[src_a, src_b])
fb = cuda.declare_device("fb", "int32(int32)", link=[src_a, src_b])


@cuda.jit("void(int32[::1], float64[::1])")
def k(r, f):
    r[0] = fa(r[0])
    r[1] = fb(r[1])
    f[0] = math.fabs(f[1])
''')
    r, f = np.array([7, 7], np.int32), np.array([0.0, -5.0])
    module.k[1, 1](r, f)
    assert r.tolist() == [14, 21] and f.tolist() == [5.0, -5.0]
