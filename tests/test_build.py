"""translator.build: sources -> importable extension, cached by content (CPU only: builds, imports,
never launches). Cold builds of a torch extension take ~25 s on 2 cores, so the base build is shared
(module-scoped) and each other cold build tests one more property at once."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import types
import uuid
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="translator.build compiles torch extensions; torch is not installed")

from translator import build  # noqa: E402
from translator.build import cache, compile as build_compile, toolchain  # noqa: E402
from translator.build import BuildError, build_extension, plan_extension  # noqa: E402

pytestmark = pytest.mark.needs("nvcc")  # builds run nvcc and the host compiler

REPO = Path(__file__).resolve().parents[1]

CU = textwrap.dedent("""\
    // tiny kernel file: no torch headers
    #include <cstdint>
    #include <cuda_runtime.h>

    __global__ void add1(float *x, int64_t n)
    {
        int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
        if (i < n)
            x[i] += 1.0f;
    }

    extern "C" cudaError_t add1_launch(float *x, int64_t n, cudaStream_t stream)
    {
        void *args[] = {&x, &n};
        dim3 grid((unsigned)((n + 255) / 256)), block(256);
        return cudaLaunchKernel((const void *)add1, grid, block, args, 0, stream);
    }
    """)

CPP = textwrap.dedent("""\
    #include <torch/extension.h>
    #include <cuda_runtime_api.h>

    extern "C" cudaError_t add1_launch(float *x, int64_t n, cudaStream_t stream);

    static int64_t ping() { return 42; }
    static int64_t add1_launch_address() { return reinterpret_cast<int64_t>(&add1_launch); }

    PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
    {
        m.def("ping", &ping);
        m.def("add1_launch_address", &add1_launch_address);
    }
    """)

# Runs a build in a fresh interpreter; prints one RESULT line (JSON).
DRIVER = textwrap.dedent("""\
    import json, sys, time
    import torch
    from translator.build import cache as build
    cu, cpp, cache, name = sys.argv[1:5]
    t0 = time.perf_counter()
    mod = build.build_extension(name, open(cu).read(), open(cpp).read(), cache_dir=cache)
    seconds = time.perf_counter() - t0
    assert mod.ping() == 42 and mod.add1_launch_address() != 0
    print("RESULT " + json.dumps({"file": mod.__file__, "seconds": seconds, "stats": build.STATS}), flush=True)
    """)


def fresh_cu(tag: str) -> str:
    """The kernel with a unique comment: a new cache key, same code."""
    return f"// {tag} {uuid.uuid4().hex}\n" + CU


def ext_dirs(cache: Path) -> list[Path]:
    root = cache / "torch-ext"
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.exists() else []


def tmp_dirs(cache: Path) -> list[Path]:
    return [p for p in ext_dirs(cache) if ".tmp-" in p.name]


def driver_popen(tmp_path: Path, cache: Path, cu: str, name: str = "tiny", tag: str = "d") -> subprocess.Popen:
    cu_file, cpp_file = tmp_path / f"{tag}.cu", tmp_path / f"{tag}.cpp"
    cu_file.write_text(cu)
    cpp_file.write_text(CPP)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-c", DRIVER, str(cu_file), str(cpp_file), str(cache), name],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def result_of(proc: subprocess.Popen, timeout: float = 300) -> tuple[dict, str]:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, f"driver failed (exit {proc.returncode}):\n{out}\n{err}"
    line = next(line for line in out.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT "):]), err


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """One cold build of (CU, CPP), shared by the tests below."""
    cache = tmp_path_factory.mktemp("cache")
    before = dict(build.STATS)
    t0 = time.perf_counter()
    mod = build_extension("tiny", CU, CPP, cache_dir=cache)
    seconds = time.perf_counter() - t0
    assert build.STATS["compiled"] == before["compiled"] + 1
    print(f"\ncold build of the tiny extension: {seconds:.1f} s")
    return types.SimpleNamespace(cache=cache, mod=mod, seconds=seconds)


# --------------------------------------------------------------------------- cheap (no compiling)


def test_cuda_home_follows_wrapper_script(tmp_path, monkeypatch):
    real = tmp_path / "cuda-x" / "bin"
    real.mkdir(parents=True)
    (real / "nvcc").write_text("#!/bin/sh\necho real\n")
    (real / "nvcc").chmod(0o755)
    wrappers = tmp_path / "wrappers"
    wrappers.mkdir()
    (wrappers / "nvcc").write_text(f'#!/bin/sh\nexec {real / "nvcc"} "$@"\n')
    (wrappers / "nvcc").chmod(0o755)
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setenv("PATH", str(wrappers))
    assert build.cuda_home() == str(tmp_path / "cuda-x")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda-x"))
    assert build.cuda_home() == str(tmp_path / "cuda-x")


def test_cache_root_and_plan(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA2CUDA_CACHE", str(tmp_path / "env-cache"))
    assert build.cache_root() == tmp_path / "env-cache"
    assert build.cache_root(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv("NUMBA2CUDA_CACHE")
    assert build.cache_root() == Path.home() / ".cache" / "numba2cuda"

    plan = plan_extension("my-kernels", CU, CPP, cache_dir=tmp_path, arch_list="8.0")
    assert plan.directory == tmp_path / "torch-ext" / f"my_kernels-{plan.key[:20]}"
    assert plan.module_name == f"n2c_my_kernels_{plan.key[:12]}"
    assert plan.arch_list == "8.0"
    other = [plan_extension("my-kernels", CU, CPP, cache_dir=tmp_path, arch_list="9.0"),
             plan_extension("my-kernels", CU + "\n", CPP, cache_dir=tmp_path, arch_list="8.0"),
             plan_extension("my-kernels", CU, CPP, cache_dir=tmp_path, arch_list="8.0", extra_cuda_cflags=["-lineinfo"])]
    assert len({plan.key, *(p.key for p in other)}) == 4


def test_arch_sources(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "8.6")
    assert plan_extension("t", CU, CPP, cache_dir=tmp_path).arch_list == "8.6"
    assert plan_extension("t", CU, CPP, cache_dir=tmp_path, arch_list="sm_90").arch_list == "9.0"
    monkeypatch.delenv("TORCH_CUDA_ARCH_LIST")
    plan = plan_extension("t", CU, CPP, cache_dir=tmp_path)
    if torch.cuda.is_available():
        assert plan.arch_list == "{}.{}".format(*torch.cuda.get_device_capability())
    else:
        assert plan.arch_list == "9.0" and "no GPU" in plan.arch_note
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "7.5")
    assert toolchain.arch_flags("8.0;9.0+PTX") == ["-gencode=arch=compute_80,code=sm_80",
                                                 "-gencode=arch=compute_90,code=compute_90",
                                                 "-gencode=arch=compute_90,code=sm_90"]
    assert os.environ["TORCH_CUDA_ARCH_LIST"] == "7.5"  # restored after asking torch


# --------------------------------------------------------------------------- builds


@pytest.mark.slow
def test_cold_build_then_warm_load(base, tmp_path):
    assert base.mod.ping() == 42
    assert base.mod.add1_launch_address() != 0  # the .cu is linked in
    so = Path(base.mod.__file__)
    plan = plan_extension("tiny", CU, CPP, cache_dir=base.cache)
    assert so == plan.so_path and (plan.directory / "complete").is_file()
    assert json.loads((plan.directory / "complete").read_text())["key"] == plan.key
    mtime = so.stat().st_mtime_ns

    # same process: the module object itself
    before = dict(build.STATS)
    t0 = time.perf_counter()
    again = build_extension("tiny", CU, CPP, cache_dir=base.cache)
    assert time.perf_counter() - t0 < 1.0
    assert again is base.mod and build.STATS["compiled"] == before["compiled"]

    # a fresh process: the published .so imported directly, no compiler
    res, err = result_of(driver_popen(tmp_path, base.cache, CU))
    print(f"warm load in a fresh process (after import torch): {res['seconds']:.3f} s")
    assert res["file"] == str(so)
    assert res["stats"]["compiled"] == 0 and res["stats"]["loaded"] == 1
    assert "building" not in err
    assert res["seconds"] < 1.0
    assert so.stat().st_mtime_ns == mtime
    assert not tmp_dirs(base.cache)


def without_ninja(monkeypatch):
    """Pretend ninja is not installed: build/compile.py then runs the same commands itself."""
    real_which = build_compile.shutil.which
    monkeypatch.setattr(build_compile.shutil, "which", lambda cmd, *a, **k: None if cmd == "ninja" else real_which(cmd, *a, **k))


@pytest.mark.slow
def test_changed_source_gets_own_directory_and_module(base, monkeypatch):
    without_ninja(monkeypatch)  # this build also covers the no-ninja runner
    cu2 = CU.replace("x[i] += 1.0f;", "x[i] += 2.0f;")
    mod2 = build_extension("tiny", cu2, CPP, cache_dir=base.cache)
    assert json.loads((Path(mod2.__file__).parent / "complete").read_text())["runner"] == "direct"
    assert Path(mod2.__file__).parent != Path(base.mod.__file__).parent
    assert mod2.__name__ != base.mod.__name__
    assert mod2.ping() == 42 and base.mod.ping() == 42  # both live in this process
    assert mod2.add1_launch_address() != base.mod.add1_launch_address()
    assert sys.modules[mod2.__name__] is mod2 and sys.modules[base.mod.__name__] is base.mod


def _cwd_inside(path: Path) -> list[int]:
    """pids of processes working in ``path`` (the compilers of a build run there)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "cwd").startswith(str(path)):
                    pids.append(int(entry.name))
            except OSError:
                pass
    return pids


@pytest.mark.slow
def test_sigkill_mid_compile_then_four_concurrent_builds_compile_once(tmp_path):
    """A build killed mid-compile leaves nothing that a later build trips on; four processes then building the
    same sources at once compile once and all load the one published module. (One cold build for both
    properties: each costs CI about 50 s.)"""
    cache = tmp_path / "cache"
    cu = fresh_cu("sigkill")
    plan = plan_extension("tiny", cu, CPP, cache_dir=cache)
    proc = driver_popen(tmp_path, cache, cu)
    deadline = time.monotonic() + 120
    stale = None
    while time.monotonic() < deadline and stale is None:
        assert proc.poll() is None, proc.communicate()
        found = [p for p in tmp_dirs(cache) if (p / "build.ninja").exists()]
        stale = found[0] if found else None
        time.sleep(0.05)
    assert stale is not None, "the build never started"
    linux = Path("/proc/self/cwd").exists()
    if linux:  # wait until ninja and both compilers (they run in the build dir) are at work
        while len(_cwd_inside(stale)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_cwd_inside(stale)) >= 3, "the compilers never started"
        time.sleep(0.5)
    else:
        time.sleep(2.0)  # the binding alone compiles for ~20 s
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    assert stale.exists() and not plan.directory.exists()  # killed before publishing
    if linux:  # ninja got SIGTERM when its parent died (PR_SET_PDEATHSIG) and stopped the compilers
        deadline = time.monotonic() + 20
        while _cwd_inside(stale) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _cwd_inside(stale), "compilers of the killed build are still running"

    procs = [driver_popen(tmp_path, cache, cu, tag=f"p{i}") for i in range(4)]
    results = [result_of(p) for p in procs]
    files = {res["file"] for res, _ in results}
    assert files == {str(plan.so_path)}, files
    assert sum(res["stats"]["compiled"] for res, _ in results) == 1
    assert sum(err.count("numba2cuda: building") for _, err in results) == 1
    ninja_log = plan.directory / ".ninja_log"
    if ninja_log.exists():  # ninja ran there once: one line per target
        targets = [line.split("\t")[3] for line in ninja_log.read_text().splitlines() if not line.startswith("#")]
        assert sorted(targets) == sorted(["tiny.cuda.o", "tiny_bind.o", plan.so_path.name])
    key_dirs = [p for p in ext_dirs(cache) if p.name.startswith(plan.directory.name)]
    assert key_dirs == [plan.directory] and (plan.directory / "complete").is_file()
    assert not tmp_dirs(cache)


BAD_CU = CU.replace("x[i] += 1.0f;", "x[i] += not_declared_anywhere;")
BAD_LINE = BAD_CU.splitlines().index("        x[i] += not_declared_anywhere;") + 1


@pytest.mark.parametrize("runner", ["ninja", "direct"])
def test_compile_error_raises_with_location(tmp_path, monkeypatch, runner):
    if runner == "direct":
        without_ninja(monkeypatch)
    cache = tmp_path / "cache"
    plan = plan_extension("tiny", BAD_CU, CPP, cache_dir=cache)
    t0 = time.perf_counter()
    with pytest.raises(BuildError) as info:
        build_extension("tiny", BAD_CU, CPP, cache_dir=cache, progress=False)
    seconds = time.perf_counter() - t0
    msg = str(info.value)
    assert isinstance(info.value, RuntimeError)
    assert f"tiny.cu({BAD_LINE})" in msg and "not_declared_anywhere" in msg
    assert str(plan.failed_dir) in msg and "nvcc" in msg  # where to look, and the command that failed
    assert not plan.directory.exists() and not tmp_dirs(cache)
    assert (plan.failed_dir / "tiny.cu").read_text() == BAD_CU and (plan.failed_dir / "build.log").exists()
    print(f"compile error reported after {seconds:.1f} s ({runner})")


def test_lock_timeout_names_the_lock_and_its_holder(tmp_path):
    cache = tmp_path / "cache"
    cu = fresh_cu("locked")
    plan = plan_extension("tiny", cu, CPP, cache_dir=cache)
    plan.directory.parent.mkdir(parents=True)
    holder_code = textwrap.dedent(f"""\
        import sys, time, types
        from pathlib import Path
        from translator.build import cache as build
        plan = types.SimpleNamespace(lock_file=Path({str(plan.lock_file)!r}), owner_file=Path({str(plan.owner_file)!r}),
                                     name="tiny")
        with build._hold_lock(plan, 10, False):
            print("locked", flush=True)
            time.sleep(120)
        """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    holder = subprocess.Popen([sys.executable, "-c", holder_code], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        t0 = time.perf_counter()
        with pytest.raises(BuildError) as info:
            build_extension("tiny", cu, CPP, cache_dir=cache, lock_timeout=1, progress=False)
        assert time.perf_counter() - t0 < 10
    finally:
        holder.kill()
        holder.wait()
    msg = str(info.value)
    assert str(plan.lock_file) in msg
    assert f"pid {holder.pid}" in msg and "still running" in msg
    assert "delete" in msg  # how to clear it
    assert not plan.directory.exists() and not tmp_dirs(cache)


@pytest.mark.gpu
def test_built_kernel_runs_on_the_gpu(base):
    """On a GPU machine: the linked add1_launch really launches (called through its address)."""
    import ctypes

    launch = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p)(
        base.mod.add1_launch_address())
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    x = torch.arange(1000, dtype=torch.float32, device="cuda")
    stream = torch.cuda.current_stream()
    assert launch(x.data_ptr(), x.numel(), stream.cuda_stream) == 0
    stream.synchronize()
    assert torch.equal(x.cpu(), torch.arange(1000, dtype=torch.float32) + 1)
