"""--import-module: the module imported in a sandboxed child (the CUDA simulator, no GPU), its kernels found as
the dispatchers it makes, however made, and their free names taken from the values the run gives; and
numba2cuda.load(kernel) reading a kernel object the caller holds."""

from __future__ import annotations

import os
import textwrap

import numpy as np
import pytest

from translator.cli import main
from translator.errors import UserError
from translator.frontend.module import parse_file
from translator.ir.typesys import parse_types_option
from translator.lower.program import Options, build_program
from translator.emit.render import render_program

FACTORY = """
    import math
    import os
    import numpy as np
    from numba import cuda, float32

    SCALE = float(os.environ.get("N2C_TEST_SCALE", "2.5"))
    COEFFS = np.cos(np.linspace(0, math.pi, 7)).astype(np.float32)
    DT = np.float32
    KEY_SEEN = int("OPENAI_API_KEY" in os.environ)

    def make_axpy(alpha, block):
        @cuda.jit(device=True)
        def helper(x):
            return x * alpha

        def axpy(x, y, out):
            buf = cuda.shared.array(block, DT)
            i = cuda.grid(1)
            if i < x.shape[0]:
                out[i] = helper(x[i]) + y[i] + COEFFS[i % 7] + KEY_SEEN
        return cuda.jit("void(float32[::1], float32[::1], float32[::1])", launch_bounds=block, lineinfo=True)(axpy)

    axpy_fast = make_axpy(SCALE * 2, 128)
    axpy_slow = make_axpy(0.5, 64)

    if __name__ == "__main__":
        raise SystemExit("the main block must not run on import")
"""


def write(tmp_path, text, name="mod.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def translate(path, **options) -> str:
    info = parse_file(path, options.pop("import_module", "sim"))
    return render_program(build_program(info, Options(**options)), path.name)


def test_static_reading_cannot_and_says_to_import(tmp_path):
    path = write(tmp_path, FACTORY)
    with pytest.raises(UserError) as exc:
        translate(path, import_module=None)
    assert "--import-module" in exc.value.text


def test_factory_kernels_with_computed_arguments(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-reach-the-child")
    cu = translate(write(tmp_path, FACTORY))
    assert "__launch_bounds__(128) axpy_fast(" in cu and "__launch_bounds__(64) axpy_slow(" in cu
    assert "alpha = 5.0;" in cu and "alpha_2 = 0.5;" in cu  # each dispatcher's own closure cells
    assert "__shared__ float buf[block];" in cu and "block = 128;" in cu and "block_2 = 64;" in cu
    assert "__constant__ float COEFFS[7] = {1.0f, 0.8660254f, 0.5f" in cu
    assert "KEY_SEEN = 0;" in cu  # the child's environment has no secrets
    assert "out[i] = helper(x[i])" in cu and "out[i] = helper_2(x[i])" in cu


def test_several_signatures_and_project_machinery(tmp_path):
    path = write(tmp_path, """
        from numba import cuda

        REGISTRY = {}

        def register(*sigs):
            def deco(fn):
                REGISTRY[fn.__name__] = cuda.jit(list(sigs))(fn)
                return REGISTRY[fn.__name__]
            return deco

        @register("void(float32[::1])", "void(float64[::1])")
        def twice(a):
            i = cuda.grid(1)
            if i < a.shape[0]:
                a[i] = 2 * a[i]
    """)
    prog = build_program(parse_file(path, "sim"), Options())
    assert [k.c_name for k in prog.kernels] == ["twice_float32", "twice_float64"]


def test_an_import_that_fails_is_said_where_it_failed_and_the_source_is_read(tmp_path, capsys):
    # the source may tell enough without the import (a relative import that fails outside its package, a test
    # module whose harness is missing): it is read, and the note says why the import did not help
    path = write(tmp_path, "import os\nos.environ['N2C_NO_SUCH_VARIABLE']\n")
    rc = main(["translate", "--import-module", str(path), "-o", str(tmp_path / "out.cu")])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert f"{path}:2:1: note: --import-module: importing the module raised KeyError: 'N2C_NO_SUCH_VARIABLE'; " \
           "numba2cuda read the source only" in err  # located at the statement that raised
    assert "error: no @cuda.jit kernel found" in err
    assert not (tmp_path / "out.cu").exists()
    path.write_text("import os\nos.environ['N2C_NO_SUCH_VARIABLE']\nfrom numba import cuda\n\n"
                    "@cuda.jit('void(float32[::1])')\ndef k(a):\n    a[0] = 1.0\n")
    rc = main(["translate", "--import-module", str(path), "-o", str(tmp_path / "out.cu")])
    err = capsys.readouterr().err
    assert rc == 0 and f"{path}:2:1: note: --import-module: importing the module raised KeyError" in err


ABSENT_PACKAGE = """
    import numpy as np
    import numba_n2c_absent as cp
    from numba_n2c_absent.cuda import runtime
    from numba import cuda

    SCALE = 1.0 / float(np.float64(4.0))
    to_device = cp.asarray
    ones = cp.ones((4, 4), dtype=cp.int64) * 2


    class Grid(cp.ndarray):
        pass


    @cuda.jit("void(float32[::1])")
    def scale(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = x[i] * SCALE


    @cuda.jit("void(float32[::1])")
    def uses_it(x):
        x[0] = to_device(1.0)
"""


def test_a_package_missing_here_is_stood_in_for_when_the_kernels_do_not_use_it(tmp_path, capsys):
    # GPU projects import cupy, mpi4py or a test harness for their host code: a kernel that does not use it
    # translates where that package is not installed, with a note
    path = write(tmp_path, ABSENT_PACKAGE)
    rc = main(["translate", "--import-module", str(path), "--kernel", "scale", "-o", str(tmp_path / "out.cu")])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert f"{path}:3:1: note: import of numba_n2c_absent: numba_n2c_absent is not installed here" in err
    assert "static constexpr double SCALE = 0.25;" in (tmp_path / "out.cu").read_text()
    rc = main(["translate", "--import-module", str(path), "--kernel", "uses_it", "-o", str(tmp_path / "o2.cu")])
    err = capsys.readouterr().err
    assert rc == 2 and f"{path}:25:12: error: call to to_device(): 'to_device' comes from numba_n2c_absent, " \
        "which is not installed here (the import stood in for it)" in err


def test_a_module_that_decides_on_a_missing_package_says_so(tmp_path, capsys):
    # a stand-in cannot know `if cupy.cuda.is_available():`; guessing could bake a wrong constant in
    path = write(tmp_path, ABSENT_PACKAGE.replace("    class Grid", "    MODE = 1 if runtime.getDeviceCount() "
                                                   "else 2\n\n\n    class Grid"))
    rc = main(["translate", "--import-module", str(path), "--kernel", "uses_it", "-o", str(tmp_path / "out.cu")])
    err = capsys.readouterr().err
    assert rc == 2 and f"{path}:12:1: note: --import-module: importing the module stopped: the " \
        "module uses the value of numba_n2c_absent.cuda.runtime.getDeviceCount(), and numba_n2c_absent is not " \
        "installed here" in err and "Traceback" not in err
    assert not (tmp_path / "out.cu").exists()


def test_an_import_that_hangs_is_stopped(tmp_path, monkeypatch):
    from translator.frontend import importmode

    monkeypatch.setattr(importmode, "IMPORT_SECONDS", 8.0)
    path = write(tmp_path, "while True:\n    pass\n")
    notes = parse_file(path, "sim").notices
    assert "timed out" in notes[0].message and "__main__" in notes[0].message


def test_an_array_past_constant_memory_is_a_clear_error(tmp_path):
    path = write(tmp_path, """
        import numpy as np
        from numba import cuda

        TABLE = np.arange(100_000, dtype=np.float32) * 0.5

        @cuda.jit("void(float32[::1])")
        def k(a):
            a[0] = TABLE[3]
    """)
    with pytest.raises(UserError) as exc:
        translate(path)
    assert "400000 bytes" in exc.value.text and "64 KiB" in exc.value.text


def test_pyproject_turns_the_mode_on(tmp_path):
    from translator.lower.options import options_from

    (tmp_path / "pyproject.toml").write_text("[tool.numba2cuda]\nimport_module = true\n")
    path = write(tmp_path, FACTORY)

    class Args:
        file = str(path)
        kernel = None
        types = None
        specialize = None
        no_assume_nonnegative = False
        import_module = None

    assert options_from(Args()).import_module == "sim"


def _closure_kernel(factor):
    from numba import cuda

    @cuda.jit
    def scaled(x, out):
        i = cuda.grid(1)
        if i < x.shape[0]:
            out[i] = x[i] * factor
    return scaled


def test_a_kernel_object_is_read_from_the_object_itself():
    from translator.ir.typesys import parse_types_option
    from translator.runtime.dropin import kernel_sources

    kernel = _closure_kernel(np.float32(1.5))
    program, cu, cpp, path = kernel_sources(kernel, Options(types=parse_types_option("x=float32[::1], out=float32[::1]")))
    assert path == os.path.realpath(__file__)
    assert [k.c_name for k in program.kernels] == ["scaled"]
    assert "factor = 1.5f;" in cu and "out[i] = x[i] * factor;" in cu


@pytest.mark.gpu
def test_load_of_a_kernel_object_runs_like_the_original():
    import torch
    import numba2cuda
    from numba import cuda

    kernel = _closure_kernel(np.float32(1.5))
    fast = numba2cuda.load(kernel, types="x=float32[::1], out=float32[::1]")
    x = torch.arange(1000, dtype=torch.float32, device="cuda")
    out = torch.empty_like(x)
    fast[4, 256](x, out)
    ref = cuda.device_array(1000, dtype=np.float32)
    kernel[4, 256](cuda.as_cuda_array(x), ref)
    assert np.array_equal(out.cpu().numpy(), ref.copy_to_host())


@pytest.mark.needs("g++")
def test_verify_with_the_import_mode(tmp_path, capsys):
    """A factory called with a value computed at import: translated from the import, and equivalent on the CPU tier."""
    path = write(tmp_path, """
        import math
        import os
        import numpy as np
        from numba import cuda

        GAIN = float(os.environ.get("N2C_TEST_GAIN", "1.5"))

        def make_gain(gain):
            @cuda.jit("void(float32[::1], float32[::1])")
            def apply_gain(x, out):
                i = cuda.grid(1)
                if i < x.shape[0]:
                    out[i] = x[i] * gain
            return apply_gain

        amplify = make_gain(GAIN * 2)

        def example(rng, size="small"):
            n = 300
            x = rng.standard_normal(n).astype(np.float32)
            out = np.zeros(n, dtype=np.float32)
            return dict(kernel=amplify, griddim=math.ceil(n / 128), blockdim=128, shared=0, args=[x, out],
                        expected={1: (x.astype(np.float64) * 3.0).astype(np.float32)}, rtol=0, atol=0)
    """, name="gain.py")
    rc = main(["verify", str(path), "--device", "cpu", "--import-module"])
    out = capsys.readouterr()
    assert rc == 0 and "verdict: EQUIVALENT" in out.out, out.out + out.err
    rc = main(["verify", str(path), "--device", "cpu"])
    assert rc == 2 and "--import-module" in capsys.readouterr().err


def test_the_pyproject_key_is_a_known_setting(tmp_path):
    from translator.settings import unknown_pyproject_keys

    (tmp_path / "pyproject.toml").write_text("[tool.numba2cuda]\nimport_module = true\nimport_modul = true\n")
    warnings = unknown_pyproject_keys(tmp_path)
    assert len(warnings) == 1 and "import_modul " in warnings[0] and "did you mean import_module" in warnings[0]


def test_a_device_function_of_a_module_next_to_it_is_translated_with_the_kernel(tmp_path):
    """Importing gives the dispatcher of a sibling module's device function: the function is read from its file
    (as the static reading reads it), never refused as 'another file'."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    write(tmp_path / "pkg", """
        from numba import cuda
        OFFSET = 3.0

        @cuda.jit(device=True)
        def shift(x):
            return x + OFFSET
    """, "helpers.py")
    path = write(tmp_path / "pkg", """
        from numba import cuda
        from .helpers import shift

        @cuda.jit("void(float64[::1])")
        def k(a):
            a[0] = shift(a[0])
    """, "kern.py")
    cu = translate(path)
    assert "return x + OFFSET;  // helpers.py:7" in cu and "a[0] = shift(a[0]);" in cu


def test_a_kernel_importing_does_not_make_is_not_sent_back_to_the_import_mode(tmp_path):
    """With --import-module on, 'no kernel named X' must not suggest --import-module again (it did: a circle)."""
    path = write(tmp_path, """
        from numba import cuda

        def make(sig):
            return cuda.jit(sig)

        @cuda.jit("void(float32[::1])")
        def k(a):
            a[0] = 1.0
    """)
    with pytest.raises(UserError) as exc:
        translate(path, kernels=["later"])
    assert "no kernel named later" in exc.value.text and "--import-module" not in exc.value.text
    assert "exists only when that function runs" in exc.value.text


def test_a_computed_value_the_import_cannot_use_is_named_as_what_it_holds(tmp_path, capsys):
    # under --import-module the module did run: its record array is named, not "numba2cuda does not run the module"
    path = write(tmp_path, """
        import numpy as np
        from numba import cuda

        def make():
            return np.zeros(3, dtype=[("x", np.float64), ("y", np.int64)])

        RECORDS = make()

        @cuda.jit("void(float64[::1])")
        def first(out):
            c = cuda.const.array_like(RECORDS)
            out[0] = c[0].x
    """)
    rc = main(["translate", "--import-module", str(path), "-o", str(tmp_path / "out.cu")])
    err = capsys.readouterr().err
    assert rc == 2 and "module variable 'RECORDS': is a NumPy array of records [('x', '<f8'), ('y', '<i8')] " \
        "when the module runs" in err and "does not run the module" not in err


def test_a_device_function_chosen_when_the_module_runs_points_at_the_import_mode(tmp_path, capsys):
    # a factory given a device function (a molecular dynamics code's pair potentials): the static reading's hint
    # names --import-module, and with it the kernel translates, as does one calling a function exec() made
    path = write(tmp_path, """
        from numba import cuda

        @cuda.jit(device=True)
        def lj(r):
            return 4.0 * (r ** -12 - r ** -6)

        def make_force(pot):
            @cuda.jit("void(float64[::1])")
            def force(r):
                i = cuda.grid(1)
                if i < r.shape[0]:
                    r[i] = pot(r[i])
            return force

        force_lj = make_force(lj)

        namespace = {}
        exec("def made(x):\\n    return 2.0 * x\\n", namespace)
        twice = cuda.jit(device=True)(namespace["made"])

        @cuda.jit("void(float64[::1])")
        def doubled(r):
            r[0] = twice(r[0])
    """)
    out = str(tmp_path / "out.cu")
    assert main(["translate", str(path), "--kernel", "force", "-o", out]) == 2
    err = capsys.readouterr().err
    assert "call to pot(): 'pot' is a parameter of 'make_force'" in err
    assert "hint: translate with --import-module" in err
    assert main(["translate", "--import-module", str(path), "--kernel", "force_lj", "-o", out]) == 0
    assert "lj(" in (tmp_path / "out.cu").read_text()
    # a device function exec() made is read from the string exec ran (was: "it has no source for numba2cuda")
    assert main(["translate", "--import-module", str(path), "--kernel", "doubled", "-o", out]) == 0
    cu = (tmp_path / "out.cu").read_text()
    assert "__device__ double twice(double x)\n{\n    return 2.0 * x;  // <exec at mod.py:19>:2\n}" in cu


def test_code_probing_a_missing_package_takes_its_fallback(tmp_path, capsys):
    # `try: ... except ImportError:` around a use of the package: where it is missing, the fallback runs
    path = write(tmp_path, """
        import numba_n2c_absent as cp
        from numba import cuda

        try:
            WIDTH = int(cp.cuda.Device().attributes["WarpSize"])
        except ImportError:
            WIDTH = 32

        @cuda.jit("void(int64[::1])")
        def width(out):
            out[0] = WIDTH
    """)
    assert main(["translate", "--import-module", str(path), "-o", str(tmp_path / "out.cu")]) == 0
    assert "static constexpr int64_t WIDTH = 32;" in (tmp_path / "out.cu").read_text()


def test_a_computed_table_star_imported_from_a_module_next_to_it(tmp_path):
    """A lattice Boltzmann code: `from modules.constants import *` of a table computed with NumPy, and
    `from numba.cuda.cudadrv.devicearray import DeviceNDArray` for its annotations. The static reading's hint did
    not name --import-module (the star import lost that the value needs running), and the import failed under the
    simulator, which has no DeviceNDArray; the simulator's own array class stands for it now."""
    (tmp_path / "modules").mkdir()
    write(tmp_path, """
        import numpy as np

        E = np.array([[0, 0], [1, 0], [0, 1], [-1, 0], [0, -1]])
        MIRROR = np.array([np.where((E == -e).all(axis=1))[0][0] for e in E])
    """, "modules/constants.py")
    path = write(tmp_path, """
        import numpy as np
        from numba import cuda
        from numba.cuda.cudadrv.devicearray import DeviceNDArray

        from modules.constants import *


        @cuda.jit
        def bounce(f_in: DeviceNDArray, f_out: DeviceNDArray):
            x = cuda.grid(1)
            if x < f_in.shape[1]:
                for i in range(5):
                    f_out[MIRROR[i], x] = f_in[i, x]
    """)
    types = parse_types_option("f_in=float64[:, ::1], f_out=float64[:, ::1]")
    with pytest.raises(UserError) as exc:
        translate(path, import_module=None, types=types)
    assert "'MIRROR': (from modules.constants)" in exc.value.text and "translate with --import-module" in exc.value.text
    cu = translate(path, types=types)
    assert "MIRROR[5] = {0, 3, 4, 1, 2};" in cu


def test_a_module_that_picks_settings_by_the_gpus_name_imports(tmp_path):
    """A particle-in-cell code sets its block size from `cuda.gpus[0]._device.name` when it is imported. The
    simulator's device had no name (AttributeError); it has one now that names no GPU, so the default applies."""
    path = write(tmp_path, """
        from numba import cuda

        if "A100" in str(cuda.gpus[0]._device.name) or b"H100" in cuda.get_current_device().name:
            TPB = 512
        else:
            TPB = 256


        @cuda.jit
        def fill(out):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = TPB
    """)
    cu = translate(path, types=parse_types_option("out=int64[::1]"))
    assert "out[i] = TPB;" in cu and "TPB = 256;" in cu


def test_a_package_with_a_module_of_its_own_name_imports_from_any_working_folder(tmp_path, monkeypatch):
    """A lattice Monte Carlo package `randium_2d_gpu/` holds `randium_2d_gpu.py` (`from . import backend`). Run from
    the project's folder (already on sys.path, behind the package's folder that import_path put first), Python
    found the plain module before the package: 'attempted relative import with no known parent package'."""
    import sys

    from translator.userimport import import_path

    package = tmp_path / "lattice_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from .lattice_pkg import Lattice\nfrom . import backend\n")
    (package / "lattice_pkg.py").write_text("from . import backend\n\nclass Lattice:\n    pass\n")
    (package / "backend.py").write_text("SIDE = 4\n")
    monkeypatch.setattr(sys, "path", [*sys.path, str(tmp_path)])
    for name in [n for n in sys.modules if n.startswith("lattice_pkg")]:
        monkeypatch.delitem(sys.modules, name)
    module = import_path(str(package / "backend.py"))
    assert module.__name__ == "lattice_pkg.backend" and module.SIDE == 4
    assert sys.path[:2] == [str(tmp_path), str(package)]


COMPUTED_SIGNATURE = """
    from numba import cuda, void, float32


    def vector(dt):
        return dt[::1]


    VEC = vector(float32)


    @cuda.jit(void(VEC, float32))
    def scale(x, a):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= a
"""


def test_a_signature_of_a_value_computed_at_import_says_so_and_names_the_import_mode(tmp_path):
    """`@cuda.jit(void(VEC, float32))` with VEC made by a call (a project's own helper; filigree's extension type):
    the error says the signature names that value, and the import mode, which the hint names, reads it (was "the
    types of x, a are unknown (Numba learns them at the first launch)" and a hint to add the signature it has)."""
    path = write(tmp_path, COMPUTED_SIGNATURE)
    with pytest.raises(UserError) as exc:
        translate(path, import_module=None)
    assert "mod.py:13:5: error: kernel 'scale' without types: its signature names 'VEC', which is computed when " \
           "the module runs (by a call)" in exc.value.text
    assert "hint: translate with --import-module (numba2cuda then imports the module as Numba would and reads the " \
           "signature's types)" in exc.value.text
    cu = translate(path)
    assert "__global__ void scale(float *x, int64_t x_shape0, float a)" in cu


def test_a_kernel_only_another_kernel_uses_is_said_to_be_a_device_function_there(tmp_path):
    """A @cuda.jit that nothing launches and another kernel calls, or passes on as a callback (cub-numba-callbacks,
    a neural network's dsoftmax): the error says which kernel uses it and to translate that one (was "the types
    of a are unknown (Numba learns them at the first launch)", of a kernel no launch will ever type)."""
    path = write(tmp_path, """
        from numba import cuda


        @cuda.jit
        def caller(a, f):
            f(a)


        @cuda.jit
        def callback(a):
            a[0] = 1


        @cuda.jit
        def kernel(a):
            caller(a, callback)
    """)
    for name in ("caller", "callback"):
        with pytest.raises(UserError) as exc:
            translate(path, import_module=None, kernels=[name])
        assert f"error: kernel '{name}' without types: nothing in this file launches it, and 'kernel' uses it " \
               "(line 17) as a device function, which Numba types by that use" in exc.value.text
        assert "hint: translate 'kernel', which carries it" in exc.value.text


NOTEBOOK_CELL = '''%%writefile saxpy.py
%matplotlib inline
!pip install numba
import numpy as np
from numba import cuda

FORMAT = """
%d items
"""


@cuda.jit
def saxpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] += a * x[i]


x = np.arange(8, dtype=np.float32)
saxpy[1, 8](np.float32(2), x, x.copy())
'''


def test_a_notebook_cell_saved_as_a_file_is_read_as_ipython_runs_it(tmp_path, capsys):
    """A tutorial's cell exported with its IPython magics (`%%writefile`, `%matplotlib inline`, `!pip install`):
    Python stops at them, IPython runs them. They are read as comments, each with a note, and the import mode
    imports the cell as IPython runs it; a string whose line starts with % is left alone (was "syntax error:
    leading zeros in decimal integer literals")."""
    path = tmp_path / "cell.py"
    path.write_text(NOTEBOOK_CELL)
    out = tmp_path / "out.cu"
    assert main(["translate", str(path), "--import-module", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "cell.py:1:1: note: IPython magic: '%%writefile saxpy.py' is a notebook's line for IPython" in err
    assert "cell.py:3:1: note: IPython magic: '!pip install numba'" in err
    assert "cell.py:8" not in err  # the string's "%d items" line is not a magic
    assert "__global__ void saxpy(float a, const float *x, int64_t x_shape0, float *y)" in out.read_text()


PYTHON2_SCRIPT = '''import numpy as np
from numba import cuda


@cuda.jit
def halve(img, out):
    i = cuda.grid(1)
    if i < img.size:
        out[i] = img[i] / 2


def sizes(n, block=64):
    grid = (n + block - 1) // block
    print 'threads per block', block
    return grid, block


if __name__ == "__main__":
    try:
        img = np.arange(256, dtype=np.int32)
    except ValueError, e:
        raise SystemExit, str(e)
    out = np.zeros(256, dtype=np.float64)
    grid, block = sizes(img.size)
    halve[grid, block](img, out)
    print out[:4],  # the first values
'''


@pytest.mark.parametrize("flags", [["--types", "img=int32[::1], out=float64[::1]"], ["--import-module"]])
def test_an_old_tutorials_python_2_statements_are_read_as_python_3_spells_them(tmp_path, capsys, flags):
    """A tutorial of Python 2 days (`print x`, `except E, e:`, `raise E, m` in its host code) neither Python 3
    nor Numba imports: each such line is read as Python 3 spells it, with a note, and the import mode imports the
    file so (was "syntax error: Missing parentheses in call to 'print'")."""
    path = tmp_path / "tutorial.py"
    path.write_text(PYTHON2_SCRIPT)
    out = tmp_path / "out.cu"
    assert main(["translate", str(path), "-o", str(out)] + flags) == 0
    err = capsys.readouterr().err
    assert ("tutorial.py:14:5: note: Python 2 statement: 'print 'threads per block', block' is Python 2, which "
            "Numba no longer runs; numba2cuda reads it as 'print('threads per block', block)'") in err
    assert "tutorial.py:21:5: note: Python 2 statement: 'except ValueError, e:'" in err
    assert "reads it as 'raise SystemExit(str(e))'\n" in err
    assert "reads it as 'print(out[:4], end=\" \")  # the first values'" in err
    code = out.read_text()
    assert "__global__ void halve(const int *img, int64_t img_shape0, double *out)" in code
    assert "out[i] = (double)img[i] / 2;" in code  # Python 3's true division, as the first note says


def test_an_integer_enum_imported_from_a_module_not_read_is_its_members_ints(tmp_path, capsys):
    """numba-cuda's enum tests import their IntEnums from a module of the installed package: Numba reads each
    member as its int (IntEnumMember), and the import mode now does. It was "'RequestError.internal_error': is
    ...RequestError.internal_error, which numba2cuda does not translate in kernels"."""
    path = write(tmp_path, """
        import math
        from http import HTTPStatus
        from re import IGNORECASE
        import numpy as np
        from numba import cuda, int16

        @cuda.jit("void(int32[::1], int64[::1])")
        def classify(codes, out):
            i = cuda.grid(1)
            if i < codes.size:
                if codes[i] >= HTTPStatus.INTERNAL_SERVER_ERROR:
                    out[i] = codes[i] - int16(HTTPStatus.NOT_FOUND)
                else:
                    out[i] = codes[i] + IGNORECASE

        def example(rng, size="small"):
            codes = rng.integers(100, 600, 200).astype(np.int32)
            out = np.zeros(200, dtype=np.int64)
            expected = np.where(codes >= 500, codes.astype(np.int64) - 404, codes.astype(np.int64) + 2)
            return dict(kernel=classify, griddim=2, blockdim=128, shared=0, args=[codes, out],
                        expected={1: expected}, rtol=0, atol=0)
    """, name="statuses.py")
    out = tmp_path / "statuses.cu"
    assert main(["translate", str(path), "--import-module", "-o", str(out)]) == 0, capsys.readouterr().err
    code = out.read_text()
    assert "if (codes[i] >= 500) {" in code and "out[i] = (int64_t)codes[i] - 404;" in code
    assert "static constexpr int64_t IGNORECASE = 2;" in code and "out[i] = codes[i] + IGNORECASE;" in code
    rc = main(["verify", str(path), "--device", "cpu", "--import-module"])
    result = capsys.readouterr()
    assert rc == 0 and "verdict: EQUIVALENT" in result.out, result.out + result.err


def test_another_modules_attribute_in_the_import_mode_is_not_said_to_need_the_import_mode(tmp_path):
    """`re.IGNORECASE` in a kernel: the import mode reads the module's own names, and its error used to tell a
    run that had --import-module to translate with --import-module."""
    path = write(tmp_path, """
        import re
        from numba import cuda

        @cuda.jit("void(int64[::1])")
        def flags(out):
            out[0] = re.IGNORECASE
    """, name="flags.py")
    with pytest.raises(UserError) as exc:
        translate(path)
    assert "'re.IGNORECASE': is an attribute of re, and the import mode reads the values of the module's own " \
           "names" in exc.value.text
    assert "hint: import it by name (`from re import IGNORECASE`)" in exc.value.text
    assert "translate with --import-module" not in exc.value.text


def test_no_kernel_of_that_name_says_why_the_import_failed(tmp_path, capsys):
    """numba-cuda's analysis tests raise SkipTest at import under the simulator: the import mode fell back to the
    source, and --kernel's error told a run that had --import-module to use --import-module."""
    path = write(tmp_path, """
        import unittest
        from numba import cuda
        from numba.cuda import config

        if config.ENABLE_CUDASIM:
            raise unittest.SkipTest("not in the simulator")

        def check(impl):
            cuda.jit(impl)[1, 1]()

        class T(unittest.TestCase):
            def test_a(self):
                def impl():
                    pass
                check(impl)
    """, name="skipping.py")
    assert main(["translate", str(path), "--import-module", "--kernel", "impl", "-o", str(tmp_path / "o.cu")]) == 2
    err = capsys.readouterr().err
    assert "hint: the import mode could not import the module (importing the module raised SkipTest: not in the " \
           "simulator" in err
    assert "is found with --import-module" not in err


def test_a_script_on_managed_memory_is_imported_under_the_simulator(tmp_path, capsys):
    """A progress-bar demo allocates `cuda.managed_array(1, dtype=np.uint64)`, which the simulator lacks: the
    import failed with AttributeError and the kernel had no types."""
    path = write(tmp_path, """
        import numpy as np
        from numba import cuda

        @cuda.jit
        def count(progress):
            cuda.atomic.add(progress, 0, 1)

        progress = cuda.managed_array(1, dtype=np.uint64)
        progress[0] = 0
        count[1, 4](progress)
    """, name="managed.py")
    out = tmp_path / "managed.cu"
    assert main(["translate", str(path), "--import-module", "-o", str(out)]) == 0, capsys.readouterr().err
    assert "__global__ void count(uint64_t *progress)" in out.read_text()


def test_a_function_only_the_import_makes_says_why_the_import_failed(tmp_path):
    """A kernel calls a function the module makes by a call, and the import fails further down (a geodesy
    library's `np.bool8` annotation under NumPy 2): the hint told a run that had --import-module to add it."""
    path = write(tmp_path, """
        from numba import cuda

        def make():
            return cuda.jit(device=True)(lambda v: v * 2)

        twice = make()

        @cuda.jit("void(float64[::1])")
        def k(x):
            x[0] = twice(x[0])

        raise RuntimeError("no data here")
    """, name="failing.py")
    with pytest.raises(UserError) as exc:
        translate(path)
    assert "make the module importable for --import-module (importing the module raised RuntimeError: no data " \
           "here" in exc.value.text
    assert "translate with --import-module" not in exc.value.text


NUMBAPRO_TUTORIAL = '''import numpy as np
from numbapro import cuda


@cuda.jit("void(float32[:], float32[:])", target="gpu")
def blur(img, out):
    i = cuda.grid(1)
    if i > 0 and i < img.shape[0] - 1:
        out[i] = (img[i - 1] + img[i] + img[i + 1]) / 3
'''


def test_a_numbapro_tutorial_is_read_as_numba(tmp_path, capsys):
    """A 2015 tutorial imports NumbaPro (`from numbapro import cuda`, `target="gpu"`), which became numba.cuda:
    it was "no @cuda.jit kernel found: this module defines no function decorated with @cuda.jit"."""
    path = tmp_path / "old.py"
    path.write_text(NUMBAPRO_TUTORIAL)
    out = tmp_path / "old.cu"
    assert main(["translate", str(path), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "old.py:2:1: note: import of numbapro: NumbaPro is Numba's predecessor" in err
    assert "old.py:5:50: note: @cuda.jit option 'target': NumbaPro's way to ask for the GPU" in err
    assert "__global__ void blur(const float *img, int64_t img_shape0, float *out)" in out.read_text()
    path.write_text(NUMBAPRO_TUTORIAL.replace("numbapro", "numba"))  # Numba itself refuses target=
    assert main(["translate", str(path), "-o", str(out)]) == 2
    assert "error: @cuda.jit option 'target': numba-cuda has no such option" in capsys.readouterr().err


def test_a_doc_snippet_without_imports_is_imported_as_it_is_read(tmp_path, capsys):
    """numba-cuda's intrinsics page launches its 3-D atomic max example without importing cuda or np: the import
    failed with NameError, so the launch never gave the kernel its types. The import now runs the snippet with the
    names the translation reads conventionally (each noted)."""
    path = write(tmp_path, """
        @cuda.jit
        def max_example_3d(result, values):
            i, j, k = cuda.grid(3)
            cuda.atomic.max(result, (0, 1, 2), values[i, j, k])

        arr = np.random.rand(1000).reshape(10, 10, 10)
        result = np.zeros((3, 3, 3), dtype=np.float64)
        max_example_3d[(2, 2, 2), (5, 5, 5)](result, arr)
    """, name="snippet.py")
    out = tmp_path / "snippet.cu"
    assert main(["translate", str(path), "--import-module", "-o", str(out)]) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert "note: 'cuda': taken to be numba.cuda" in err and "importing the module raised" not in err
    assert "// kernel max_example_3d(result: float64[:, :, ::1], values: float64[:, :, ::1])" in out.read_text()


def test_an_attribute_of_a_module_of_the_project_is_read_from_the_run(tmp_path):
    """A detector simulation's `from . import geom` and `geom.BORDERS[k][0]`, `enumerate(geom.BORDERS)`,
    `geom.BORDERS.shape[0]`, where
    geom computes the table when it runs: the import mode reads it as Numba does when it compiles (it said
    'the import mode reads the values of the module's own names, not of another module's')."""
    (tmp_path / "det").mkdir()
    (tmp_path / "det" / "__init__.py").write_text("")
    write(tmp_path, """
        import numpy as np

        BORDERS = np.linspace(0.0, 3.0, 4).reshape(2, 2)
        SCALE = float(BORDERS.sum())
    """, "det/geom.py")
    path = write(tmp_path, """
        from numba import cuda
        from . import geom


        @cuda.jit("void(float64[::1], int64[::1])")
        def which(xs, out):
            i = cuda.grid(1)
            if i < xs.shape[0]:
                out[i] = -geom.BORDERS.shape[0]
                for k, row in enumerate(geom.BORDERS):
                    if row[0] <= xs[i] * geom.SCALE <= geom.BORDERS[k][1]:
                        out[i] = k
    """, "det/kern.py")
    with pytest.raises(UserError) as exc:
        translate(path, import_module=None)
    assert "translate with --import-module" in exc.value.text
    cu = translate(path)
    assert "geom_BORDERS[2][2] = {0.0, 1.0, 2.0, 3.0};" in cu and "xs[i] * 6.0" in cu, cu
    assert "for (int64_t k = 0; k < 2; ++k)" in cu and "out[i] = -2;" in cu


def test_a_cpointer_in_a_signature_object_reads_as_in_the_source(tmp_path):
    """numba-cuda's carray test: `cuda.jit(types.void(types.CPointer(types.float32), types.int32))`. Its
    Signature object prints the pointer `float32*`, which the import mode passed on and could not read."""
    path = write(tmp_path, """
        from numba import cuda
        from numba.cuda import types


        @cuda.jit(types.void(types.CPointer(types.float32), types.int32))
        def bump(p, n):
            i = cuda.grid(1)
            if i < n:
                p[i] += 1.0
    """)
    assert "void bump(float *p, int n)" in translate(path, import_module=None)
    assert "void bump(float *p, int n)" in translate(path)


MAIN_SETS = """
    import math
    import sys
    import numpy as np
    from numba import cuda


    @cuda.jit(device=True)
    def spaced(x):
        return x * STEP


    @cuda.jit
    def scale(out, xs):
        i = cuda.grid(1)
        if i < xs.size:
            out[i] = spaced(xs[i]) + math.sqrt(xs[i])


    if __name__ == "__main__":
        ARGS
        grid = np.linspace(0.0, 1.0, 11)
        STEP = grid[1] - grid[0]
"""


def test_a_value_the_main_block_sets_for_a_device_function_is_read_from_the_run(tmp_path):
    """An accretion-disk script computes `dr = r[1] - r[0]` under `if __name__ == "__main__":`, and a device
    function its kernel calls reads it. The import mode ran the block only where it launches the kernel, and read
    only the kernel's own names: it said 'set under if __name__ == "__main__"' even with --import-module. A
    block that fails says how, and no longer suggests the flag it is run with."""
    types = parse_types_option("out=float64[:], xs=float64[:]")
    path = write(tmp_path, MAIN_SETS.replace("ARGS", "pass"))
    assert "static constexpr double STEP = 0.1;" in translate(path, types=types)
    path = write(tmp_path, MAIN_SETS.replace("ARGS", "n = int(sys.argv[1])"), "needs_args.py")
    with pytest.raises(UserError) as exc:
        translate(path, types=types)
    assert "error: module variable 'STEP'" in exc.value.text and "block raised IndexError" in exc.value.text
    assert "--import-module" not in exc.value.text.split("error:", 1)[1]


def test_a_kernel_made_of_an_imported_function_and_called_from_device_code(tmp_path):
    """A particle pusher makes `boris_gpu = cuda.jit(boris)` of a function it imports from a sibling module and calls
    it from its kernel: the import mode raised KeyError ('helpers.py:kick_gpu.device'), an internal error, where the
    static reading translated it."""
    pkg = tmp_path / "pusher"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    write(pkg, """
        M = 2.0


        def kick(u, q):
            return u + q / M
    """, "helpers.py")
    path = write(pkg, """
        from numba import cuda
        from .helpers import kick

        kick_gpu = cuda.jit(kick)


        @cuda.jit("void(float64[::1], float64)")
        def push(u, q):
            i = cuda.grid(1)
            if i < u.size:
                u[i] = kick_gpu(u[i], q)
    """, "kern.py")
    for mode in (None, "sim"):
        cu = translate(path, import_module=mode, kernels=["push"])
        assert "u[i] = kick_gpu(u[i], q);" in cu, cu


def test_a_value_the_failed_import_would_give_does_not_name_the_flag_again(tmp_path, capsys):
    """Advent of Code day 8 computes `n_instrs` when it runs; under --import-module its import raised (a NumPy 2
    OverflowError), and the message still said "translate with --import-module", which the user had just done."""
    path = write(tmp_path, """
        import numpy as np
        from numba import cuda

        def count():
            return 8

        n_instrs = count()
        bad = np.uint16(-12)

        @cuda.jit("void(int64[::1])")
        def k(a):
            i = cuda.grid(1)
            if i < n_instrs:
                a[i] = i
    """)
    rc = main(["translate", "--import-module", str(path), "-o", str(tmp_path / "out.cu")])
    err = capsys.readouterr().err
    assert rc == 2 and "importing the module raised OverflowError" in err
    assert "hint: make the module importable for --import-module (importing the module raised OverflowError" in err
    assert "translate with --import-module" not in err


def test_device_arrays_a_device_function_reads_in_a_test_loop_are_passed_down_from_the_kernel(tmp_path):
    """numba-cuda's test_device_array_capture: a test method makes `global_arr = cuda.to_device(...)` in a loop over
    array factories and dtypes, and a device function the kernel calls reads it (a 0-D one too). The static
    reading said 'assigned in a loop' without naming the import mode, and the import mode refused the device
    function's read ('is a device array ... pass it as an argument'). Numba captures the pointer: it is now a
    trailing parameter of every function from the kernel, which takes it from its launcher, down to the read."""
    path = write(tmp_path, """
        import numpy as np
        from numba import cuda

        FACTORIES = [("direct", cuda.to_device), ("copied", lambda a: cuda.to_device(a.copy()))]

        class TestCapture:
            def test_dtypes(self):
                for name, make in FACTORIES:
                    for dtype, values in [(np.int32, [10, 20, 30]), (np.float64, [1.5, 2.5, 3.5])]:
                        table = make(np.array(values, dtype=dtype))
                        zero_d = make(np.array(4.0, dtype=np.float32))

                        @cuda.jit(device=True)
                        def lookup(idx):
                            return table[idx]

                        @cuda.jit(device=True)
                        def read_twice(idx):
                            return lookup(idx) + lookup(idx)

                        @cuda.jit
                        def kernel(output):
                            i = cuda.grid(1)
                            if i < output.size:
                                output[i] = read_twice(i) + zero_d[()]

                        out = cuda.device_array(3, dtype=dtype)
                        kernel[1, 3](out)
    """)
    with pytest.raises(UserError) as static:
        translate(path, import_module=None, types=parse_types_option("output=int32[:]"))
    assert "is assigned in a loop" in str(static.value) and "--import-module" in str(static.value)
    cu = translate(path, import_module="sim")
    assert "int lookup(int64_t idx, const int *table, int64_t table_shape0)" in cu
    assert "int64_t read_twice(int64_t idx, const int *table, int64_t table_shape0)" in cu
    assert "lookup(idx, table, table_shape0) + lookup(idx, table, table_shape0);" in cu
    assert "output[i] = (double)read_twice(i, table, table_shape0) + zero_d[0];" in cu
    assert "void kernel(int *output, int64_t output_shape0, const int *table, int64_t table_shape0, " \
        "const float *zero_d)" in cu


def test_a_launch_with_a_tuple_of_tuples_is_typed_from_the_run(tmp_path):
    """numba-cuda's test_tuple_of_tuples_and_scalars launches `f[1, 1](r, ((6, 5, 4), 7))`: the run typed x as
    `Tuple(UniTuple(int64, 3), int64)`, a spelling the type parser refuses (a Tuple takes one tuple of types), so
    the kernel was 'without types' though it had launched."""
    path = write(tmp_path, """
        import numpy as np
        from numba import cuda

        def test_nested():
            @cuda.jit
            def f(r, x):
                r[0] = len(x)
                r[1] = len(x[0])
                r[2] = x[0][2]
                r[3] = x[1]

            r = np.ones(4, dtype=np.int64)
            f[1, 1](r, ((6, 5, 4), 7))
    """)
    cu = translate(path, import_module="sim")
    assert "void f(int64_t *r, int64_t x_0_0, int64_t x_0_1, int64_t x_0_2, int64_t x_1)" in cu
    assert "r[2] = x_0_2;" in cu and "r[0] = 2;" in cu


def test_a_record_dtype_a_test_computes_types_the_shared_array_it_sizes(tmp_path):
    """numba-cuda's test_sm `_test_shared(arr)`: `dt = from_dtype(arr.dtype)` in the test, then
    `cuda.shared.array(nthreads, dtype=dt)` in its kernel. The run described dt as a record, but the module's
    records had been read before (without it), so dt stayed 'computed when _test_shared runs'."""
    path = write(tmp_path, """
        import numpy as np
        from numba import cuda, void
        from numba.np import numpy_support as nps

        recordwith2darray = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])

        rec_t = nps.from_dtype(recordwith2darray)

        @cuda.jit(void(rec_t[::1]))
        def touch(x):
            x[0].i = 1

        def _test_shared(arr):
            nthreads = 4
            dt = nps.from_dtype(arr.dtype)

            @cuda.jit
            def chunk_copy(x, y):
                sm = cuda.shared.array(nthreads, dtype=dt)
                tx = cuda.threadIdx.x
                sm[tx] = x[tx]
                cuda.syncthreads()
                y[tx] = sm[nthreads - 1 - tx]

            out = np.zeros_like(arr)
            chunk_copy[1, nthreads](arr, out)

        def test_pairs():
            _test_shared(np.zeros(4, np.dtype([("i", np.int32), ("b", np.float64)])))
    """)
    cu = translate(path, import_module="sim")
    assert "__shared__ dt sm[nthreads];" in cu and "int i;" in cu and "double b;" in cu
