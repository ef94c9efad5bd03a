"""Every kernels/*.py module, run through its own ``example()``.

Each module is run in a subprocess (``tests/corpus_harness.py``) because Numba's CUDA
simulator must be switched on before numba is imported.  Outputs are pre-filled with NaN
(or an integer absent from the expected result) so a kernel that skips work fails, and
inputs must come back unchanged.

Modules the simulator cannot run are listed in GPU_ONLY with the reason: their launch
test is marked ``gpu`` and runs on a real GPU instead, and their ``reference()`` is
checked here against an independent computation.  ``test_corpus_on_gpu`` runs every
module on a real GPU when there is one (the simulator is lenient where Numba's compiler
is not, e.g. about types).
"""
import ast
import functools
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
KERNELS = ROOT / "kernels"
HARNESS = pathlib.Path(__file__).resolve().parent / "corpus_harness.py"
MODULES = sorted(p.stem for p in KERNELS.glob("*.py") if not p.name.startswith("_"))

# module -> (why Numba's CUDA simulator, numba-cuda 0.30.4, cannot run it,
#            a piece of the error it gives)
GPU_ONLY = {
    "warp_reduce": ("the simulator implements no warp shuffles (cuda.shfl_*_sync)",
                    "'FakeCUDAModule' object has no attribute 'shfl_down_sync'"),
    "laplace_grid_sync": ("the simulator runs blocks one after another and this_grid().sync() as a block "
                          "barrier: it runs only one-block cooperative grids", "Not equal to tolerance"),
}


def run_harness(name, simulator=True, launch=True, dump=None, timeout=120):
    env = dict(os.environ)
    if simulator:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    else:
        env.pop("NUMBA_ENABLE_CUDASIM", None)
    cmd = [sys.executable, str(HARNESS), str(KERNELS / f"{name}.py")]
    if not launch:
        cmd.append("--no-launch")
    if dump:
        cmd += ["--dump", str(dump)]
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)
    lines = proc.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        pytest.fail(f"harness crashed (rc={proc.returncode}):\n{proc.stdout}\n{proc.stderr}")


@functools.lru_cache(maxsize=None)
def sim_result(name):
    """One simulator run per module, shared by the tests below."""
    return run_harness(name, simulator=True, launch=name not in GPU_ONLY)


def test_corpus_is_complete():
    expected = {"matmul", "matmul_tile", "matmul_naive", "vector_add", "rgb_to_grey",
                "blur", "softmax", "reduce_sum", "transpose", "histogram", "warp_reduce",
                "heat", "index_math"}
    assert expected <= set(MODULES)
    assert set(GPU_ONLY) <= set(MODULES)


def _module_constants(tree):
    """Names bound at module level to int literals or expressions of them."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            if all(isinstance(n, (ast.Constant, ast.Name, ast.BinOp, ast.UnaryOp,
                                  ast.operator, ast.unaryop, ast.Load))
                   for n in ast.walk(node.value)):
                names.update(t.id for t in node.targets)
    return names


def _declared_types(tree) -> dict:
    for node in tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "NUMBA2CUDA_TYPES":
            return ast.literal_eval(node.value)
    return {}


@pytest.mark.parametrize("name", MODULES)
def test_kernel_language_rules(name):
    """Static checks the simulator does not make but Numba's compiler does."""
    tree = ast.parse((KERNELS / f"{name}.py").read_text())
    consts = _module_constants(tree)
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert "reference" in funcs and "example" in funcs
    declared = _declared_types(tree)
    kernels = 0
    # a kernel a factory makes (kernels/factory_kernel.py) is a function nested in another; the names the factory
    # binds (its parameters, its assignments) are constants to the kernel, as Numba freezes closure variables
    for outer in funcs.values():
        nested = [n for n in ast.walk(outer) if isinstance(n, ast.FunctionDef) and n is not outer
                  and n.decorator_list]
        if nested:
            consts = consts | {a.arg for a in outer.args.args} | {
                t.id for n in ast.walk(outer) if isinstance(n, ast.Assign) for t in n.targets
                if isinstance(t, ast.Name)}
            funcs = {**funcs, **{n.name: n for n in nested}}
    for f in funcs.values():
        for dec in f.decorator_list:
            if isinstance(dec, ast.Call) and ast.unparse(dec.func) in ("vectorize", "guvectorize"):
                target = next((k.value for k in dec.keywords if k.arg == "target"), None)
                assert isinstance(target, ast.Constant) and target.value == "cuda", f"{f.name}: a CUDA ufunc"
                assert dec.args and isinstance(dec.args[0], ast.List), f"{f.name}: a ufunc lists its signatures"
                kernels += 1  # one elementwise kernel per signature
                continue
            if ast.unparse(dec) == "cuda.jit":  # lazy, as the lecture writes it: types declared statically
                assert f.name in declared, f"{f.name}: a kernel without a signature needs NUMBA2CUDA_TYPES"
                kernels += 1
                continue
            if not (isinstance(dec, ast.Call) and ast.unparse(dec.func) == "cuda.jit"):
                continue
            device = any(k.arg == "device" for k in dec.keywords)
            has_sig = bool(dec.args) and isinstance(dec.args[0], ast.Constant) \
                and isinstance(dec.args[0].value, str)
            assert device or has_sig, f"{f.name}: a kernel needs a signature string"
            kernels += not device
    assert kernels >= 1
    # shared/local array shapes: literals or module constants, never expressions
    # (Numba: "No implementation of function ... shared.array ... (Literal[int](16), int64)")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) in (
                "cuda.shared.array", "cuda.local.array"):
            shape = node.args[0] if node.args else next(
                k.value for k in node.keywords if k.arg == "shape")
            dims = shape.elts if isinstance(shape, ast.Tuple) else [shape]
            for d in dims:
                ok = isinstance(d, ast.Constant) and isinstance(d.value, int) \
                    or isinstance(d, ast.Name) and d.id in consts
                assert ok, f"line {node.lineno}: shape {ast.unparse(shape)} is not constant"


@pytest.mark.parametrize("name", MODULES)
def test_reference_is_nontrivial(name):
    ref = sim_result(name)["reference"]
    assert ref["ok"], ref["msg"]


def _launch_params():
    for name in MODULES:
        if name in GPU_ONLY:
            yield pytest.param(name, id=name, marks=pytest.mark.gpu(reason=GPU_ONLY[name][0]))
        else:
            yield pytest.param(name, id=name)


@pytest.mark.parametrize("name", list(_launch_params()))
def test_kernel_matches_reference(name):
    if name in GPU_ONLY:               # only reached on a machine with a GPU
        result = run_harness(name, simulator=False)
    else:
        result = sim_result(name)
    assert result["reference"]["ok"], result["reference"]["msg"]
    assert result["launch"] is not None
    assert result["launch"]["ok"], result["launch"]["msg"]


@pytest.mark.parametrize("name", sorted(GPU_ONLY))
def test_gpu_only_modules_still_fail_in_simulator(name):
    """If a newer simulator runs the module, move it out of GPU_ONLY."""
    result = run_harness(name, simulator=True)
    assert result["reference"]["ok"], result["reference"]["msg"]
    assert not result["launch"]["ok"]
    reason, error = GPU_ONLY[name]
    assert error in result["launch"]["msg"], reason


def test_warp_reduce_reference_independent(tmp_path):
    """warp_reduce only runs on a GPU: check its reference() by plain Python instead."""
    dump = tmp_path / "warp_reduce.npz"
    result = run_harness("warp_reduce", simulator=True, launch=False, dump=dump)
    assert result["reference"]["ok"], result["reference"]["msg"]
    data = np.load(dump)
    x, expected = data["arg0"], data["expected1"]
    assert x.dtype == np.int32 and x.ndim == 1
    assert x.shape[0] % 128 != 0            # a partial last block
    total = 0
    for v in x.tolist():
        total += v
    assert expected.dtype == np.int32 and expected.shape == (1,)
    assert int(expected[0]) == total
    assert np.all(data["arg1"] == 0)        # the accumulator starts at zero


@pytest.mark.gpu
@pytest.mark.parametrize("name", [m for m in MODULES if m not in GPU_ONLY])
def test_corpus_on_gpu(name):
    result = run_harness(name, simulator=False)
    assert result["reference"]["ok"], result["reference"]["msg"]
    assert result["launch"]["ok"], result["launch"]["msg"]


def test_index_math_reference_independent(tmp_path):
    """index_math is about Python semantics: check its NumPy reference() by plain Python."""
    dump = tmp_path / "index_math.npz"
    result = run_harness("index_math", simulator=True, launch=False, dump=dump)
    assert result["reference"]["ok"], result["reference"]["msg"]
    data = np.load(dump)
    a, b, iexp, fexp = data["arg0"], data["arg1"], data["expected2"], data["expected3"]
    assert (a < 0).any() and (b < 0).any()
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        j = -1000
        total = steps = 0
        for j in range(x, y, -3):
            total += j
            steps += 1
        assert iexp[i].tolist() == [x // y, x % y, (x - 5) // 3 + (x - 5) % 3 * 100,
                                    total, steps, j], (x, y)
        assert fexp[i].tolist() == [x / y, (x - 3) / 4], (x, y)
    assert (iexp[:, 4] == 0).any() and (iexp[:, 4] > 0).any()   # empty and non-empty loops
