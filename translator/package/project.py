"""translated module -> self-contained pip-installable project (setup.py + CUDAExtension), optionally its wheel.

``package("kernels/matmul.py", "out/")`` writes::

    out/pyproject.toml              build-system: setuptools + torch==<the torch installed here>
    out/setup.py                    CUDAExtension NAME._C from the two sources below (SASS per arch, PTX newest)
    out/_cuda_home.py               numba2cuda's CUDA toolkit search (build/cudahome.py, verbatim), run by setup.py
    out/MANIFEST.in                 so the sdist carries csrc/ and tests/
    out/README.md                   usage, kernels and signatures, provenance
    out/csrc/<stem>_kernels.cu      the same .cu as `numba2cuda translate` / the JIT path
    out/csrc/<stem>_bindings.cpp    the same torch bindings as numba2cuda.load
    out/NAME/__init__.py            drop-in kernels (k[grid, block, stream, shared](*args)); imports only torch
    out/NAME/_build_info.py         provenance, CUDA targets and the autotune table, if the module has a
                                    <stem>.n2c-tune.json (plain constants; setup.py reads them)
    out/tests/test_NAME.py          imports the package; on a GPU runs each kernel once

The generated runtime's launch logic is numba2cuda's own translator/runtime/launch.py and launch_checks.py,
written verbatim as <name>/_launch.py and <name>/launch_checks.py: one copy of them, and numba2cuda is never
imported by the package.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import keyword
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .. import progress
from ..version import __version__
from ..atomic import write_atomically
from ..emit.bindings import render_bindings
from ..lower.names import entry_name
from ..runtime.dropin import extension_name, fast_math, kernel_metadata
from ..errors import UserError
from ..frontend.module import parse_file
from ..lower.program import Options, build_program
from ..emit.render import Renderer, environment, python_signature, render_program

LAUNCH_SOURCE = Path(__file__).resolve().parents[1] / "runtime" / "launch.py"
CHECKS_SOURCE = LAUNCH_SOURCE.with_name("launch_checks.py")  # launch.py imports it as .launch_checks
CUDA_HOME_SOURCE = Path(__file__).resolve().parents[1] / "build" / "cudahome.py"
DEFAULT_ARCH = "8.0;9.0"

__all__ = ["package", "PackageResult", "PackageBuildError", "parse_arch"]

TORCH_DTYPES = {
    "bool": "torch.bool", "int8": "torch.int8", "int16": "torch.int16", "int32": "torch.int32",
    "int64": "torch.int64", "uint8": "torch.uint8", "uint16": "torch.uint16", "uint32": "torch.uint32",
    "uint64": "torch.uint64", "float16": "torch.float16", "float32": "torch.float32", "float64": "torch.float64",
    "complex64": "torch.complex64", "complex128": "torch.complex128",
}


class PackageBuildError(RuntimeError):
    """Building the wheel failed; the message holds the trimmed compiler output."""


@dataclass
class PackageResult:
    out_dir: Path
    name: str
    files: list[str] = field(default_factory=list)  # relative paths, sorted
    wheel: Path | None = None
    build_seconds: float | None = None


def parse_arch(arch: str) -> tuple[list[tuple[int, int, str]], tuple[int, int] | None]:
    """"8.0;9.0" -> SASS [(8, 0, ""), (9, 0, "")] and PTX (9, 0) for the newest. Separators: ; , or spaces;
    a "+PTX" suffix is accepted and ignored (PTX is always built for the newest architecture)."""
    parts = [p for p in re.split(r"[;,\s]+", arch or "") if p]
    if not parts:
        raise UserError(f"--arch: error: no architecture in {arch!r}\n    hint: write e.g. \"8.0;9.0\"")
    sass = set()
    for part in parts:
        m = re.fullmatch(r"(\d+)\.(\d)([af]?)(\+PTX)?", part, re.IGNORECASE)
        if not m:
            raise UserError(f"--arch: error: bad architecture {part!r} in {arch!r}\n"
                            "    hint: write compute capabilities such as \"8.0;9.0\" (8.6, 9.0a, 10.0 ...)")
        sass.add((int(m.group(1)), int(m.group(2)), m.group(3).lower()))
    ordered = sorted(sass)
    newest = ordered[-1]
    return ordered, (newest[0], newest[1])


def _identifier(path) -> str:
    name = extension_name(path)
    return name if name and not name[0].isdigit() else f"_{name}"


def _torch_requirement(torch_version: str | None) -> str:
    if torch_version is None:
        try:
            torch_version = importlib.metadata.version("torch")
        except importlib.metadata.PackageNotFoundError:
            return "torch"
    return "torch==" + torch_version.split("+")[0]


def _launch_lines(source: str, kernel_names: list[str]) -> list[str]:
    """Launch lines the source itself shows (docstrings, comments, host code): NAME[...](...), in order."""
    out = []
    for name in kernel_names:
        for m in re.finditer(rf"\b{re.escape(name)}\[", source):
            i, depth, end = m.end() - 1, 0, None
            while i < len(source) and source[i] != "\n":  # the [...] then the (...), on one line
                ch = source[i]
                depth += ch in "[("
                depth -= ch in "])"
                if depth == 0 and ch in "])":
                    if ch == ")":
                        end = i + 1
                        break
                    if source[i + 1:i + 2] != "(":
                        break
                i += 1
            if end is not None:
                line = source[m.start():end]
                if "," in line[:line.index("](")] and line not in out:  # [grid, block, ...]
                    out.append(line)
    return out


def _smoke_args(fn) -> list[str]:
    args = []
    for p in fn.python_params:
        if not hasattr(p.type, "kind") and p.array is None:  # a tuple parameter
            items = ["1.0" if t.is_float else "1" for t in p.type.items]
            args.append(f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})")
        elif p.array is not None and p.type.dtype.kind == "r":  # records: RNG states' uint64 words, others' bytes
            size = getattr(p.type.dtype, "size", None)
            shape = ", ".join(["SIZE"] * p.type.ndim + [str(size or p.type.dtype.bits // 64)])
            args.append(f'torch.zeros(({shape}), dtype=torch.{"uint8" if size else "uint64"}, device="cuda")')
        elif p.array is not None:
            shape = "(SIZE,)" if p.type.ndim == 1 else f"({', '.join(['SIZE'] * p.type.ndim)})"
            args.append(f'torch.zeros({shape}, dtype={TORCH_DTYPES[p.type.dtype.name]}, device="cuda")')
        elif p.type.kind == "b":
            args.append("True")
        else:
            args.append("1.0" if p.type.is_float else "1")
    return args


def render_files(path, *, name: str | None = None, arch: str = DEFAULT_ARCH, options: Options | None = None,
                 torch_version: str | None = None, package_version: str = "0.1.0",
                 translation=None) -> tuple[str, dict[str, str]]:
    """(package name, {relative path: text}) of the project for the Numba module at PATH; `translation`:
    a (program, .cu text) made elsewhere (translator/llm/backend.py), instead of the rules' own."""
    path = Path(path)
    stem = _identifier(path)
    name = name or f"{stem}_cuda"
    if not name.isidentifier() or keyword.iskeyword(name) or name in ("torch", "numpy", "tests"):
        raise UserError(f"--name: error: {name!r} is not usable as a Python package name\n"
                        "    hint: letters, digits and underscores, not starting with a digit, e.g. matmul_cuda")
    sass, ptx = parse_arch(arch)
    info = parse_file(str(path), (options or Options()).import_module, options or Options())
    source_name = path.name
    if translation is None:
        program = build_program(info, options or Options())
        cu_text = render_program(program, source_name)
    else:
        program, cu_text = translation
    cpp_text = render_bindings(program, source_name)
    source_sha256 = hashlib.sha256(info.source.encode()).hexdigest()
    renderer = Renderer(program, source_name)
    kernels = []
    for fn in program.kernels:
        _, params, _, static_shared = kernel_metadata(fn)
        kernels.append(dict(
            name=entry_name(fn), python_signature=python_signature(fn), nparams=len(params), params=[p[0] for p in params],
            param_specs=[repr(p) for p in params], static_shared=static_shared,
            notes=renderer.kernel_context(fn, "")["notes"], smoke_args=_smoke_args(fn)))
    torch_requirement = _torch_requirement(torch_version)
    cu_path, cpp_path = f"csrc/{stem}_kernels.cu", f"csrc/{stem}_bindings.cpp"
    sass_names = ", ".join(f"sm_{a}{b}{s}" for a, b, s in sass)
    launch_lines = _launch_lines(info.source, [k["name"] for k in kernels]) or \
        [f"{k['name']}[grid, block, stream, shared_bytes]({', '.join(k['params'])})" for k in kernels]
    llm = getattr(program, "llm_provenance", None) or {}
    ctx = dict(name=name, version=__version__, source_name=source_name, source_sha256=source_sha256,
               translated_by=repr("llm" if llm else "rules"), model=repr(llm.get("model")),
               prompt_version=repr(llm.get("prompt_version")), llm_answers=repr(dict(sorted(llm.get("answers",
                                                                                                {}).items()))),
               kernels=kernels, kernel_tuple=repr(tuple(k["name"] for k in kernels)), sass_tuple=repr(tuple(sass)),
               kernel_names=repr(sorted(k["name"] for k in kernels)), sass=sass, ptx=ptx,
               sass_names=sass_names, ptx_name=f"compute_{ptx[0]}{ptx[1]}" if ptx else "",
               fast_math=fast_math(program), torch_requirement=torch_requirement,
               torch_version_note=torch_requirement.replace("torch", "", 1) or "(any recent)",
               cu_path=cu_path, cpp_path=cpp_path, package_version=package_version, launch_lines=launch_lines,
               **_tuning_context(path, [k["name"] for k in kernels]))
    env = environment()
    files = {
        "pyproject.toml": "pyproject.toml.j2",
        "setup.py": "setup.py.j2",
        "MANIFEST.in": "MANIFEST.in.j2",
        "README.md": "README.md.j2",
        f"{name}/__init__.py": "__init__.py.j2",
        f"{name}/_build_info.py": "_build_info.py.j2",
        f"tests/test_{name}.py": "test_package.py.j2",
    }
    texts = {rel: env.get_template(f"package/{tpl}").render(**ctx) for rel, tpl in files.items()}
    texts = {rel: re.sub(r"\n{3,}(?=\S)", "\n\n\n", text) for rel, text in texts.items()}
    texts[cu_path] = cu_text
    texts[cpp_path] = cpp_text
    texts[f"{name}/_launch.py"] = LAUNCH_SOURCE.read_text(encoding="utf-8")
    texts[f"{name}/launch_checks.py"] = CHECKS_SOURCE.read_text(encoding="utf-8")
    texts["_cuda_home.py"] = CUDA_HOME_SOURCE.read_text(encoding="utf-8")
    return name, dict(sorted(texts.items()))


def _tuning_context(path: Path, kernel_names: list[str]) -> dict:
    """The module's autotune table (<stem>.n2c-tune.json), as a sorted Python literal for _build_info.TUNING."""
    from ..runtime.tuning import read_tuning, tuning_path

    tune_file = tuning_path(path)
    table = read_tuning(tune_file)
    table = {k: {p: dict(sorted(s.items())) for p, s in sorted(table[k].items())}
             for k in sorted(table) if k in kernel_names}
    return dict(tuning=repr(table), tuning_source=tune_file.name if table else "none recorded")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, text)


def package(path, out_dir, *, name: str | None = None, arch: str = DEFAULT_ARCH, wheel: bool = False,
            options: Options | None = None, torch_version: str | None = None,
            package_version: str = "0.1.0", verbose: bool = False, translation=None) -> PackageResult:
    """Write a pip-installable project for the Numba module at PATH into OUT_DIR; wheel=True also builds
    OUT_DIR/dist/NAME-*.whl (pip wheel --no-build-isolation; needs torch and the CUDA toolkit).

    Raises UserError for bad input (untranslatable kernels, bad name or arch, OUT_DIR a file) and
    PackageBuildError when the wheel does not build."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: error: the output exists and is not a directory")
    pkg_name, texts = render_files(path, name=name, arch=arch, options=options, torch_version=torch_version,
                                   package_version=package_version, translation=translation)
    for rel, text in texts.items():
        _write(out / rel, text)
    result = PackageResult(out, pkg_name, list(texts))
    if wheel:
        result.wheel, result.build_seconds = build_wheel(out, pkg_name, verbose=verbose)
    return result


def build_wheel(out_dir, name: str, *, verbose: bool = False) -> tuple[Path, float]:
    """pip wheel --no-build-isolation --no-deps -w dist . in OUT_DIR, with CUDA_HOME set to the toolkit
    numba2cuda builds with; returns (the wheel, seconds)."""
    import time

    try:
        importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        raise UserError("numba2cuda package --wheel: error: PyTorch is not installed\n"
                        "    hint: pip install torch (the wheel is built with torch.utils.cpp_extension)") from None
    from ..build import BuildError, cuda_home

    try:
        home = cuda_home()
    except BuildError as exc:
        raise UserError(str(exc)) from None
    out = Path(out_dir).resolve()
    dist = out / "dist"
    for old in list(dist.glob(f"{name}-*.whl")) if dist.exists() else []:
        old.unlink()
    env = dict(os.environ, CUDA_HOME=home, PIP_DISABLE_PIP_VERSION_CHECK="1")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index",
           "-w", str(dist), "."]
    t0 = time.monotonic()
    with progress.bar(f"building the wheel of {name}: pip wheel (nvcc and c++ through setuptools)"):
        proc = subprocess.run(cmd, cwd=out, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    seconds = time.monotonic() - t0
    if verbose:
        sys.stderr.write(proc.stdout)
    wheels = sorted(dist.glob(f"{name}-*.whl")) if dist.exists() else []
    if proc.returncode != 0 or not wheels:
        raise PackageBuildError(f"numba2cuda: building the wheel of {name} failed (exit {proc.returncode}):\n"
                                + _trim(proc.stdout) + f"\n    command: cd {out} && CUDA_HOME={home} "
                                + " ".join(cmd[2:]))
    return wheels[-1], seconds


def _trim(output: str, max_errors: int = 6) -> str:
    """The compiler's error lines (with their indented context), else the end of the output."""
    from ..build.compile import pick_error_lines

    picked, _ = pick_error_lines(output.splitlines(), max_errors)
    return "\n".join("    " + line for line in picked)
