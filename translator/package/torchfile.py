"""translated module -> one Python file that builds its kernels with torch's load_inline and launches them like Numba.

`numba2cuda translate kernels/matmul.py --emit torch` writes matmul_torch.py: the kernel .cu and the binding
.cpp (the very texts `translate` and `numba2cuda.load` use), numba2cuda's launch logic (runtime/launch.py,
verbatim, as packages carry it), numba2cuda's CUDA toolkit search (build/cudahome.py, verbatim), and a
torch.utils.cpp_extension.load_inline call, the workflow of the
lecture's load_cuda helper. The file needs torch alone; it is what to hand to someone who will not install
numba2cuda. (numba2cuda's own build drives ninja instead: see README "Why not load_inline".)
"""

from __future__ import annotations

import ast
from pathlib import Path

from ..emit.bindings import render_bindings
from ..emit.render import environment, python_signature
from ..runtime.dropin import extension_name, kernel_metadata, nvcc_flags
from ..version import __version__

LAUNCH_SOURCE = Path(__file__).resolve().parents[1] / "runtime" / "launch.py"
CUDA_HOME_SOURCE = Path(__file__).resolve().parents[1] / "build" / "cudahome.py"


def python_string(text: str) -> str:
    """TEXT as a readable raw triple-quoted literal where that spells it exactly, else repr()."""
    if "'''" not in text and not text.endswith("\\") and "\r" not in text:
        return "r'''" + text + "'''"
    return repr(text)


def without_docstring(path: Path) -> str:
    """A module's source without its docstring (the generated file has its own)."""
    text = path.read_text(encoding="utf-8")
    body = ast.parse(text).body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        text = "".join(text.splitlines(keepends=True)[body[0].end_lineno:]).lstrip("\n")
    return text


def module_name(path) -> str:
    """The generated file's module name: <stem>_torch."""
    stem = extension_name(path)
    return f"{stem if stem and not stem[0].isdigit() else '_' + stem}_torch"


def render_torch_module(path, program, cu_text: str) -> str:
    """The self-contained Python file for PROGRAM (translated from PATH), whose kernel source is CU_TEXT."""
    source_name = Path(path).name
    cpp_text = render_bindings(program, source_name)
    kernels = []
    for fn in program.kernels:
        name, params, arrays, written, _ = kernel_metadata(fn)
        kernels.append(dict(name=name, params=list(params), param_names=repr(params), array_positions=repr(arrays),
                            written=("{" + ", ".join(map(str, sorted(written))) + "}") if written else "set()",
                            python_signature=python_signature(fn)))
    # fast math as Numba's fastmath=True asks; the C++ standard is left to torch (its headers need their own)
    cuda_flags = ["-O3", *nvcc_flags(program)]
    text = environment().get_template("torch_module.py.j2").render(
        module=module_name(path), source_name=source_name, version=__version__, kernels=kernels,
        cuda_source=python_string(cu_text), cpp_source=python_string(cpp_text), launch_source=without_docstring(LAUNCH_SOURCE),
        cuda_home_source=without_docstring(CUDA_HOME_SOURCE),
        cuda_flags=repr(cuda_flags))
    compile(text, module_name(path) + ".py", "exec", dont_inherit=True)  # a bug here must not reach the user's disk
    return text
