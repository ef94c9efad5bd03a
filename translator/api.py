"""The public Python API: numba source -> .cu text (translate_file, translate_source), and a Numba module's
kernels built and loaded as drop-in replacements (load: by rules or, for what they reject, by a model;
synchronize names a kernel that faulted)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

from .emit.render import render_program
from .errors import UserError
from .frontend.module import parse_file, parse_source
from .lower.program import Options, build_program
from .runtime import dropin
from .runtime.launch_checks import KernelFaultError, LaunchError

__all__ = ["KernelFaultError", "LaunchError", "Options", "load", "synchronize", "translate_file", "translate_source"]


def synchronize(device=None) -> None:
    """Wait for the GPU's work (torch.cuda.synchronize); a kernel fault CUDA reports there raises KernelFaultError
    naming the last kernel numba2cuda launched."""
    from .runtime.launch import synchronize as wait  # imports torch: only when called

    wait(device)


def load(path, *, backend: str | None = None, model: str | None = None, base_url: str | None = None,
         llm_cache=None, replay: bool = False, refresh: bool = False, llm_attempts: int | None = None,
         llm_budget: float | None = None, llm_timeout: float | None = None, specialize: dict | None = None,
         types: dict | str | None = None, kernels=None, assume_nonnegative: bool = True, extra_cuda_cflags=(),
         progress: bool = True, cu_text: str | None = None, import_module: str | None = None):
    """Translate, build (cached by content) and load a Numba module's kernels as drop-in replacements.

    backend: "rules", "llm" or "auto", as `numba2cuda translate --backend` (default: [tool.numba2cuda] backend of
    the nearest pyproject.toml, else "auto": the rules, and the model configured by OPENAI_BASE_URL /
    NUMBA2CUDA_MODEL (or model=, base_url=) only for kernels the rules reject, kept only once verified).
    model, base_url, llm_cache, replay, refresh, llm_attempts, llm_budget, llm_timeout: the --model, --base-url,
    --llm-* flags. The other arguments are runtime.dropin.load's (cu_text: build that translation instead;
    import_module: "sim" or "gpu"). A kernel object (a Numba dispatcher) is translated by the rules and its drop-in
    kernel returned."""
    from .llm.config import settings_from

    build = dict(specialize=specialize, types=types, kernels=kernels, assume_nonnegative=assume_nonnegative,
                 extra_cuda_cflags=extra_cuda_cflags, progress=progress, import_module=import_module)
    if dropin.is_dispatcher(path):
        return dropin.load(path, cu_text=cu_text, **build)
    args = SimpleNamespace(backend=backend, model=model, base_url=base_url, llm_cache=llm_cache, replay=replay,
                           refresh=refresh, llm_attempts=llm_attempts, llm_budget=llm_budget,
                           llm_timeout=llm_timeout, llm_retries=None)
    settings = settings_from(args, path)
    if cu_text is not None or settings.backend == "rules":
        return dropin.load(path, cu_text=cu_text, **build)
    if settings.backend == "auto":
        try:  # the rules first, as fast as ever (a warm load is a cache hit); the model only where they reject
            return dropin.load(path, **build)
        except UserError as exc:
            if not exc.diagnostics:
                raise
    from .llm.backend import translate_module

    options = dropin.load_options(specialize, types, kernels, assume_nonnegative, import_module)
    log = (lambda message: print(message, file=sys.stderr, flush=True)) if progress else (lambda message: None)
    program, text = translate_module(path, options, args, log=log)
    if getattr(program, "llm_provenance", None) is None:  # the rules translated every kernel
        return dropin.load(path, **build)
    return dropin.load(path, cu_text=text, **build)


def translate_source(source: str, path: str = "<string>", options: Options | None = None) -> str:
    info = parse_source(source, path)
    program = build_program(info, options or Options())
    return render_program(program, Path(path).name)


def translate_file(path: str | Path, options: Options | None = None) -> str:
    info = parse_file(path, (options or Options()).import_module, options or Options())
    program = build_program(info, options or Options())
    return render_program(program, Path(path).name)
