"""The package layout is the pipeline: one subpackage per stage, imports flowing one way, no circles, no private
name reached across modules, and the package data inside the wheel.

An AST walk over translator/ (every import, module-level or inside a function: a lazy import is still a
dependency) finds each module's translator imports; the stage order below is the one README's "How it is
built" and translator/__init__.py describe."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "translator"

#: stage -> rank: a module may import modules of its own rank or lower, never higher.
STAGES = {
    "errors": 0, "atomic": 0, "sandbox": 0, "confine": 0, "version": 0, "progress": 0, "extras": 0, "batch": 0,
    "stack": 0, "userimport": 0,
    "ir": 1, "frontend": 2, "analysis": 3, "lower": 4, "emit": 5, "build": 6, "runtime": 7,
    "verify": 8, "llm": 9, "bench": 10, "package": 11,
    "translator": 12, "api": 12, "testing": 12, "pytest_plugin": 12, "doctor": 12, "settings": 12,
    "cli": 13, "__main__": 14,
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def imports_of(module: str, path: Path, modules: dict) -> list[tuple[str, str, int]]:
    """[(imported translator module, imported name or "", line)] of one module."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "translator":
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.append((sub, "", node.lineno) if sub in modules else (target, alias.name, node.lineno))
        elif isinstance(node, ast.Import):
            out += [(a.name, "", node.lineno) for a in node.names if a.name.split(".")[0] == "translator"]
    return out


def graph() -> dict[str, set[str]]:
    """module -> the translator modules importing it executes (the named module and its packages' __init__s,
    except the importer's own packages, which are already being imported)."""
    modules = all_modules()
    edges = {}
    for name, path in modules.items():
        own = {".".join(name.split(".")[:k]) for k in range(1, name.count(".") + 1)}
        deps = set()
        for target, _, _ in imports_of(name, path, modules):
            parts = target.split(".")
            deps |= {p for p in (".".join(parts[:k]) for k in range(1, len(parts) + 1)) if p not in own}
        deps.discard(name)
        edges[name] = {d for d in deps if d in modules}
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(edges.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(edges):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def test_every_module_belongs_to_a_known_stage():
    unknown = sorted(m for m in all_modules() if stage(m) not in STAGES)
    assert not unknown, f"modules outside the pipeline's stages (add them to a stage or to STAGES): {unknown}"


def test_no_import_circles():
    cycle = find_cycle(graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_imports_flow_in_pipeline_order():
    modules = all_modules()
    backwards = []
    for name, path in modules.items():
        for target, _, line in imports_of(name, path, modules):
            if STAGES[stage(target)] > STAGES[stage(name)]:
                backwards.append(f"{path.relative_to(ROOT)}:{line}: {stage(name)} imports {target} "
                                 f"(stage {stage(target)} comes later)")
    assert not backwards, "imports against the pipeline:\n" + "\n".join(backwards)


def test_no_private_name_imported_across_modules():
    modules = all_modules()
    private = [f"{path.relative_to(ROOT)}:{line}: {target}.{name}"
               for mod, path in modules.items() for target, name, line in imports_of(mod, path, modules)
               if name.startswith("_") and not name.startswith("__")
               or (not name and target.rpartition(".")[2].startswith("_") and not target.endswith("__"))]
    assert not private, "private names imported from another module:\n" + "\n".join(private)


def test_every_stage_says_its_arrow():
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text()))
        assert doc and "->" in doc.splitlines()[0], f"{init.relative_to(ROOT)}: say the stage's arrow"


def test_checker_finds_a_planted_circle_and_a_backward_import():
    """The checks above can fail: a circle and an upward import are found in a made-up graph."""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    assert STAGES[stage("translator.cli")] > STAGES[stage("translator.frontend.module")]


@pytest.mark.slow
def test_wheel_holds_the_package_data_and_imports_in_a_clean_venv(tmp_path):
    """The wheel carries templates, prompts and the CPU runtime header, and `import translator, numba2cuda` works
    from it in a fresh virtual environment (only the light dependencies installed)."""
    dist = tmp_path / "dist"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(dist), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wheel = next(dist.glob("numba2cuda-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("translator/templates/module.cu.j2", "translator/templates/bindings.cpp.j2",
                   "translator/templates/n2c_helpers.cuh", "translator/templates/package/setup.py.j2",
                   "translator/prompts/system.j2", "translator/prompts/VERSION", "translator/runtime/n2c_cpu.h",
                   "translator/runtime/launch.py", "translator/cli.py", "numba2cuda/__init__.py"):
        assert needed in names, f"{needed} missing from {wheel.name}"
    stages = {n.split("/")[1] for n in names if n.startswith("translator/") and n.count("/") == 2}
    assert {"frontend", "ir", "analysis", "lower", "emit", "build", "runtime", "verify", "bench", "llm",
            "package"} <= stages
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the installed wheel, not a checkout
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300,
                   env=env)
    py = venv / "bin" / "python"
    proc = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--force-reinstall",
                           str(wheel)], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    code = ("import translator, numba2cuda, translator.testing; "
            "assert translator.__file__.startswith(%r), translator.__file__; "
            "print(numba2cuda.translate_file(%r).count('__global__'))") % (str(venv), str(ROOT / "kernels" / "matmul.py"))
    proc = subprocess.run([str(py), "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 0 and int(proc.stdout.strip()) >= 1, proc.stdout + proc.stderr
