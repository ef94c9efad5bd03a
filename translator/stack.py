"""a translation step -> run on a thread with a deep stack, so nesting the frontend admits never overflows one.

The frontend, the typer, the lowering and the C printer recurse once per level of an expression, as does
libcst's parser (native code, which segfaults on the main thread's 8 MiB stack at 2000 nested parentheses).
frontend/guard.py bounds the nesting any input reaches (MAX_NESTING); this module provides the stack and the
recursion limit that bound needs: a thread of STACK_BYTES with RECURSION_LIMIT, entered once per call chain
(a step already on such a thread runs in place). At the bottom of the pipeline because parsing, lowering and
rendering all enter it."""

from __future__ import annotations

import functools
import sys
import threading

#: far more than MAX_NESTING levels need (about 20 Python frames and 2 KiB of C stack per level, measured);
#: only the pages a deep input touches are ever committed
STACK_BYTES = 512 << 20
RECURSION_LIMIT = 100_000

_state = threading.local()
_lock = threading.Lock()
_raised = 0  # deep calls running; the process's recursion limit is raised while there are any
_saved_limit = 0


def on_deep_stack() -> bool:
    return getattr(_state, "deep", False)


def _raise_limit() -> None:
    global _raised, _saved_limit
    with _lock:
        if _raised == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, RECURSION_LIMIT))
        _raised += 1


def _restore_limit() -> None:
    global _raised
    with _lock:
        _raised -= 1
        if _raised == 0:
            sys.setrecursionlimit(_saved_limit)


def run_deep(fn, *args, **kwargs):
    """fn(*args, **kwargs) on a deep-stack thread; its result, or its exception re-raised here."""
    if on_deep_stack():
        return fn(*args, **kwargs)
    outcome: dict = {}

    def target():
        _state.deep = True
        try:
            outcome["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # handed to the caller's thread, which raises it
            outcome["error"] = exc

    _raise_limit()
    try:
        with _lock:  # threading.stack_size is process-wide: set it only for this thread's creation
            previous = threading.stack_size(STACK_BYTES)
            try:
                worker = threading.Thread(target=target, name="numba2cuda-deep-stack", daemon=True)
                worker.start()
            finally:
                threading.stack_size(previous)
        worker.join()
    finally:
        _restore_limit()
    if "error" in outcome:
        error = outcome.pop("error")
        try:
            raise error.with_traceback(error.__traceback__)
        finally:
            del error
    return outcome["value"]


def deep_stack(fn):
    """Decorator: the function always runs on a deep-stack thread (see run_deep)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return run_deep(fn, *args, **kwargs)

    return wrapper
