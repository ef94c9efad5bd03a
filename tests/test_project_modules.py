"""Modules a kernel's project gives it: `import constants` of a module at the project's root, from a kernel in a
sub-folder (Python finds it because the program runs from the root), read as siblings are, parsed and never run,
and put on sys.path by the import mode; and functions whose cuda.jit carries an option numba-cuda's kernels refuse
(`nopython=True`), which numba-cuda compiles where a kernel calls them."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from translator.cli import main
from translator.emit.render import render_program
from translator.errors import UserError
from translator.frontend.module import parse_file
from translator.lower.program import Options, build_program

KERNEL = """
    import constants
    import smoothing
    from numba import cuda


    @cuda.jit("void(float64[:])")
    def clamp(a):
        i = cuda.grid(1)
        if i < a.size and a[i] > constants.LIMIT:
            a[i] = smoothing.weight(constants.LIMIT)
"""
CONSTANTS = "LIMIT = 8.5\n"
SMOOTHING = """
    from numba import cuda


    @cuda.jit(device=True)
    def weight(d):
        return 1.0 - d
"""


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def project(root, marker=None):
    """Fluid-Simulator's layout: main.py's folder holds constants.py and smoothing.py; the kernel is in Physics/."""
    write(root / "constants.py", CONSTANTS)
    write(root / "smoothing.py", SMOOTHING)
    write(root / "__init__.py", "")
    write(root / "Physics" / "__init__.py", "")
    if marker:
        write(root / marker, "")
    return write(root / "Physics" / "gpu.py", KERNEL)


def translate(path, mode=None) -> str:
    return render_program(build_program(parse_file(path, mode), Options()), path.name)


def test_a_kernel_in_a_sub_folder_reads_the_project_roots_modules(tmp_path):
    cu = translate(project(tmp_path / "proj", marker="pyproject.toml"))
    assert "a[i] > 8.5" in cu
    assert "weight(8.5)" in cu and "__device__ double weight(double d)" in cu


def test_the_project_root_bounds_the_search(tmp_path):
    """A module above the folder that holds .git (or pyproject.toml) is no module of the project."""
    write(tmp_path / "constants.py", CONSTANTS)
    write(tmp_path / "smoothing.py", SMOOTHING)
    path = write(tmp_path / "proj" / "Physics" / "gpu.py", KERNEL)
    write(tmp_path / "proj" / ".git", "")
    with pytest.raises(UserError) as exc:
        translate(path)
    assert "constants" in exc.value.text


def test_the_import_mode_finds_the_project_roots_modules(tmp_path):
    cu = translate(project(tmp_path / "proj"), "sim")
    assert "8.5" in cu and "weight(" in cu


HELPER = """
    from numba import cuda


    @cuda.jit(nopython=True, parallel=True)
    def scale(a, i, x):
        a[i] = a[i] * x
"""
CALLER = """
    from numba import cuda
    {imports}

    @cuda.jit("void(float32[:], float32)")
    def k(a, x):
        i = cuda.grid(1)
        if i < a.size:
            scale(a, i, x)
"""


@pytest.mark.parametrize("where", ["same file", "sibling module"])
def test_a_function_with_nopython_that_a_kernel_calls_is_its_device_function(tmp_path, capsys, where):
    """simDRIFT's walkers: numba-cuda ignores the options where a kernel calls the function (a device function
    there); it raises TypeError only where one is launched."""
    if where == "same file":
        path = write(tmp_path / "kern.py", textwrap.dedent(HELPER) + textwrap.dedent(CALLER.format(imports="")))
    else:
        write(tmp_path / "helpers.py", HELPER)
        path = write(tmp_path / "kern.py", CALLER.format(imports="from helpers import scale"))
    out = tmp_path / "k.cu"
    assert main(["translate", str(path), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "option 'nopython': ignored where a kernel calls this function" in err
    assert "option 'parallel': ignored where a kernel calls this function" in err
    text = out.read_text()
    assert "__device__" in text and "scale(" in text and "__global__ void k(" in text


def test_a_launched_kernel_with_nopython_is_refused(tmp_path, capsys):
    path = write(tmp_path / "kern.py", textwrap.dedent(HELPER) + textwrap.dedent(CALLER.format(imports="")))
    assert main(["translate", str(path), "--kernel", "scale", "--types", "a=float32[:], i=int64, x=float32",
                 "-o", str(tmp_path / "s.cu")]) == 2
    err = capsys.readouterr().err
    assert "kern.py:5:20: error: @cuda.jit option 'nopython': numba-cuda has no such option" in err
    assert not (tmp_path / "s.cu").exists()


LINEINFO = """
    import numpy as np
    from numba import cuda


    @cuda.jit("void(float32[::1])", lineinfo=True, max_registers=32, lto=True)
    def twice(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] *= 2


    def example(rng, size="small"):
        a = rng.uniform(-1, 1, 40).astype(np.float32)
        return dict(kernel=twice, griddim=2, blockdim=32, args=[a], expected={0: a * 2})
"""


@pytest.mark.needs("g++")
def test_verify_runs_a_module_whose_kernels_ask_for_options_the_simulator_lacks(tmp_path, capsys):
    """The CUDA simulator's cuda.jit refuses lineinfo=, max_registers= and lto=, which numba-cuda takes: the
    module could not even be imported as verify's reference, so no kernel with them could be verified on the CPU."""
    path = write(tmp_path / "opts.py", LINEINFO)
    assert main(["verify", str(path)]) == 0
    assert "verdict: EQUIVALENT" in capsys.readouterr().out


MASK_GET = """


    @njit
    def mask_get(mask, pos):
        return (mask[pos // mask_bitsize] >> (pos % mask_bitsize)) & 1
"""
FILL = """
    from numba import cuda
    from utils import {names}


    @cuda.jit("void(float64, uint8[::1], float64[::1])")
    def fill(value, validity, out):
        i = cuda.grid(1)
        if i < out.size and not mask_get(validity, i):
            out[i] = {value}
"""


def test_a_computed_variable_of_the_module_a_helper_comes_from_is_called_a_module_variable(tmp_path, capsys):
    """An @njit function of utils.py reads utils' mask_bitsize (computed by a call): the message called it a
    closure variable, though no function encloses it."""
    write(tmp_path / "utils.py", textwrap.dedent("""
        import os
        from numba import njit

        mask_bitsize = int(os.environ.get("MASK_BITS", "8"))
    """) + textwrap.dedent(MASK_GET))
    path = write(tmp_path / "kern.py", FILL.format(names="mask_get", value="value"))
    assert main(["translate", str(path), "-o", str(tmp_path / "k.cu")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'utils.py'}:11:25: error: module variable 'mask_bitsize':" in err


BUSY = """
    {imports}


    @cuda.jit
    def busy(out):
        x = float32(0.0)
        for _ in range(10):
            x += float32(1.5)
        out[cuda.grid(1)] = x
"""
SIMSAFE = """
    import os
    if os.environ.get("USE_OTHER_TARGET"):
        from other_target import cuda, float32
    else:
        from numba import cuda, float32
"""


@pytest.mark.parametrize("layout", ["package not found", "module that chooses"])
def test_cuda_from_a_project_module_numba2cuda_cannot_read_is_numbas(tmp_path, capsys, layout):
    """cubie's tests and benchmarks take `cuda` and Numba's types from cubie.cuda_simsafe, which picks them by an
    environment variable (and is not next to the tests): the kernels were 'not found' at all."""
    if layout == "module that chooses":
        write(tmp_path / "simsafe.py", SIMSAFE)
        path = write(tmp_path / "kern.py", BUSY.format(imports="from simsafe import cuda, float32"))
        source = "simsafe, which chooses it when it runs"
    else:
        path = write(tmp_path / "kern.py", BUSY.format(imports="from project_not_here.simsafe import cuda, float32"))
        source = "project_not_here.simsafe, which numba2cuda cannot find"
    out = tmp_path / "k.cu"
    assert main(["translate", str(path), "--types", "out=float32[::1]", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"'cuda': taken to be numba.cuda: it comes from {source}" in err
    assert f"'float32': taken to be numba.float32: it comes from {source}" in err
    assert "__global__ void busy(float *out" in out.read_text()


def test_a_device_function_with_nopython_is_compiled_without_it(tmp_path, capsys):
    """simDRIFT's jp/random.py: `@cuda.jit(device=True, nopython=False)`, which numba-cuda's device compile never
    reads; it was refused as an option Numba refuses, and every kernel calling it with it."""
    path = write(tmp_path / "kern.py", """
        from numba import cuda


        @cuda.jit(device=True, nopython=False)
        def half(v):
            return v * 0.5


        @cuda.jit("void(float32[::1])")
        def k(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = half(a[i])
    """)
    assert main(["translate", str(path), "-o", str(tmp_path / "k.cu")]) == 0
    assert "kern.py:5:33: note: @cuda.jit option 'nopython': ignored: numba-cuda compiles a device function" in \
        capsys.readouterr().err


def test_the_itemsize_of_a_dtype_is_a_constant(tmp_path):
    """pygdf's utils.py: `mask_dtype = np.dtype(np.uint8)`, `mask_bitsize = mask_dtype.itemsize * 8`, read by the
    kernels and by an @njit helper; it was 'not a constant numba2cuda can evaluate'."""
    write(tmp_path / "utils.py", textwrap.dedent("""
        import numpy as np
        from numba import njit

        mask_dtype = np.dtype(np.uint8)
        mask_bitsize = mask_dtype.itemsize * 8
        WORD = np.float32(0).itemsize + np.arange(3, dtype=np.int16).itemsize
    """) + textwrap.dedent(MASK_GET))
    path = write(tmp_path / "kern.py", FILL.format(names="mask_bitsize, mask_get, WORD",
                                                   value="value + mask_bitsize + WORD"))
    cu = translate(path)
    assert "mask_bitsize = 8;" in cu and "WORD = 6;" in cu


CFG_KERNEL = """
    from numba import cuda
    import genalg_cfg as cfg


    @cuda.jit("void(int64[::1], int64[::1])")
    def crossover(config_i, out):
        i = cuda.grid(1)
        if i < config_i[cfg.POPULATION_SIZE]:
            out[i] = config_i[cfg.CHROMO_SIZE] * cfg.SCALE
"""


@pytest.mark.parametrize("mode", [None, "sim"])
def test_a_module_the_projects_pythonpath_gives_is_read(tmp_path, monkeypatch, mode):
    """PyGenAlg's kernels `import GenAlgCfg as cfg` from a folder its pp.bat puts on PYTHONPATH: statically the
    module was not found ('cannot read without running it'), and the import mode refused `cfg.N` as 'another
    module's' name. Computed values (SCALE) need the run."""
    cfg_dir = tmp_path / "cfg"
    write(cfg_dir / "genalg_cfg.py", f"""
        POPULATION_SIZE = 0
        CHROMO_SIZE = 1
        SCALE = {'int("3")' if mode else '3'}
    """)
    path = write(tmp_path / "examples" / "kern.py", CFG_KERNEL)
    monkeypatch.setenv("PYTHONPATH", str(cfg_dir))
    monkeypatch.syspath_prepend(str(cfg_dir))
    cu = translate(path, mode)
    assert "if (i < config_i[0]) {" in cu and "out[i] = config_i[1] * 3;" in cu


def test_a_device_function_the_module_makes_by_exec_is_read_by_the_import_mode(tmp_path, capsys):
    """ZMCintegral exec()s the user's device function into its globals: the message was 'call to fun(): is not
    supported in kernels', with a hint listing device functions, which fun is."""
    path = write(tmp_path / "mc.py", '''
        import math
        from numba import cuda

        USER_FUNC = """
        @cuda.jit(device=True)
        def fun(v):
            return math.sin(v)
        """
        exec(USER_FUNC, globals())


        @cuda.jit("void(float64[::1], float64[::1])")
        def integrate(out, x):
            i = cuda.grid(1)
            if i < out.shape[0]:
                out[i] = fun(x[i])
    ''')
    assert main(["translate", str(path), "-o", str(tmp_path / "a.cu")]) == 2
    err = capsys.readouterr().err
    assert "error: call to fun(): 'fun' is defined nowhere in this file: the module makes names when it runs" in err
    assert "translate with --import-module" in err
    assert main(["translate", str(path), "--import-module", "-o", str(tmp_path / "b.cu")]) == 0
    assert "sin(" in (tmp_path / "b.cu").read_text()


def test_a_function_exec_makes_only_later_is_said_so_under_the_import_mode(tmp_path, capsys):
    """ZMCintegral exec()s the user's function inside a method the import never calls: with --import-module the
    message repeated its own hint to use --import-module."""
    path = write(tmp_path / "mc.py", '''
        from numba import cuda


        def setup(source):
            exec(source, globals())


        @cuda.jit("void(float64[::1])")
        def integrate(out):
            i = cuda.grid(1)
            if i < out.shape[0]:
                out[i] = fun(i)
    ''')
    assert main(["translate", str(path), "--import-module", "-o", str(tmp_path / "a.cu")]) == 2
    err = capsys.readouterr().err
    assert "'fun' is defined nowhere in this file: the module makes names when it runs (exec, globals()), and " \
           "importing it did not make this one" in err
    assert "translate with --import-module" not in err


def test_libraries_on_pythonpath_are_not_read_as_the_projects_modules(tmp_path, monkeypatch):
    """numba2cuda's child processes run with every sys.path folder on PYTHONPATH, site-packages included: reading
    PYTHONPATH's modules as the project's parsed numba's own __init__.py for `from numba import cuda` (the LLM tests
    took five times as long)."""
    import numba

    from translator.frontend.module import parse_source

    site = str(Path(numba.__file__).resolve().parent.parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([site, str(tmp_path / "cfg")]))
    write(tmp_path / "cfg" / "settings.py", "N = 4\n")
    read: dict = {}
    info = parse_source("import numpy as np\nfrom numba import cuda\nimport settings\n", str(tmp_path / "k.py"), read)
    assert [p for p in read if read[p] is not None] == [str(tmp_path / "cfg" / "settings.py")]
    assert info.constants["settings.N"] == 4


def test_a_package_whose_init_imports_many_modules_still_reads_the_kernels_helpers(tmp_path):
    """PhantomGaze's package __init__ imports every module, the kernel's own included, so reading `from phantomgaze
    import ScreenBuffer` read the package; at 16 files numba2cuda stopped reading, and the device functions of the
    kernel's own sub-package were reported as coming from a module it does not read."""
    pkg = tmp_path / "gaze"
    names = [f"part{k}" for k in range(20)]
    write(pkg / "__init__.py", "".join(f"from gaze.{n} import VALUE_{k}\n" for k, n in enumerate(names))
          + "import gaze.render\nfrom gaze.render.volume import volume\n")
    for k, n in enumerate(names):
        write(pkg / f"{n}.py", f"VALUE_{k} = {k}\n")
    write(pkg / "render" / "__init__.py", "from gaze.render.camera import ray\nfrom gaze.render.volume import volume\n")
    write(pkg / "render" / "camera.py", """
        from numba import cuda


        @cuda.jit(device=True)
        def ray(x):
            return 2.0 * x
    """)
    kernel = write(pkg / "render" / "volume.py", """
        from numba import cuda

        from gaze import VALUE_3
        from gaze.render.camera import ray


        @cuda.jit("void(float64[::1])")
        def volume(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = ray(a[i]) + VALUE_3
    """)
    cu = translate(kernel)
    assert "a[i] = ray(a[i]) + VALUE_3;" in cu and "VALUE_3 = 3" in cu and "__device__ double ray(double x)" in cu


def test_a_module_a_package_imports_is_an_attribute_of_the_package(tmp_path):
    """pygamd's `potentials.rng.saruprng(...)` after `from pygamd.forces import potentials`, whose __init__ imports
    rng: "call to saruprng(): it comes from ..., which numba2cuda does not read"."""
    root = tmp_path / "proj"
    write(root / "setup.py", "")
    for init in ("pkg", "pkg/sub", "pkg/integ"):
        write(root / init / "__init__.py", "")
    write(root / "pkg" / "sub" / "dev" / "__init__.py", "from pkg.sub.dev import rng\n")
    write(root / "pkg" / "sub" / "dev" / "rng.py", """
        from numba import cuda

        SCALE = 3


        @cuda.jit(device=True)
        def draw(a, b):
            return (a * 1103515245 + b) % 65536
    """)
    kernel = write(root / "pkg" / "integ" / "step.py", """
        from numba import cuda
        from pkg.sub import dev


        @cuda.jit("void(int64[:], int64)")
        def step(out, seed):
            i = cuda.grid(1)
            if i < out.shape[0]:
                out[i] = dev.rng.draw(seed, i) * dev.rng.SCALE
    """)
    cu = translate(kernel)
    assert "__device__ int64_t draw(int64_t a, int64_t b)" in cu
    assert "out[i] = draw(seed, i) * 3;" in cu
