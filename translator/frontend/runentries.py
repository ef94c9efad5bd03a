"""The import mode's child side, continued: after the import, the module's tests, `main()` and `__main__` block
that reach a kernel the import left unfinished are run, as a user runs them, until that kernel is launched.

Numba compiles such a kernel at its first launch, with that launch's argument types and the values its free
names hold then. So each launch of a kernel of this file is intercepted before it runs: its arguments' types
and its free names are described (frontend/probe.py's Describer) and the entry point is stopped there, which
also keeps a long script from simulating its whole workload. A launch whose types differ from those --types
asks for runs on, as it would have, and the next one is looked at. Kernels launched before it, and host code,
run under the CUDA simulator. Each entry point has a time limit; a failure in one (an assertion, a test the
simulator cannot run) is noted and the next is tried. The entry points come from frontend/entries.py.
"""

from __future__ import annotations

import inspect
import os
import signal
import time
import unittest

from ..ir import typesys as T
from .entries import MAIN_BLOCK, main_block
from .standins import stand_in_for

IMPORT = "importing the module"  # what describes a kernel launched at the module's top level
ENTRY_SECONDS = 20.0
RUN_SECONDS = 60.0


class _Seen(BaseException):
    """Stops an entry point at the launch it was run for (a BaseException: `except Exception:` in a test must not
    swallow it)."""


class _OutOfTime(BaseException):
    pass


def _alarm(signum, frame):
    raise _OutOfTime()


def python_function(dispatcher):
    """The Python function a dispatcher compiles (a CUDADispatcher's py_func, a simulator kernel's fn)."""
    return getattr(dispatcher, "py_func", None) or getattr(dispatcher, "fn", None)


def _parameters(dispatcher) -> list:
    return list(inspect.signature(python_function(dispatcher)).parameters)


def _matches(launched: list, params: list, want: dict) -> bool:
    """Whether a launch's types agree with --types where both name a parameter: an array's element type and
    dimension count, a scalar's kind (Numba's own spelling of a Python int is int64, the user's may be int32)."""
    for param, text in zip(params, launched):
        if param not in want:
            continue
        try:
            got, asked = T.parse_type(text), T.parse_type(want[param])
        except T.TypeStringError:
            return False
        if isinstance(asked, T.Array) != isinstance(got, T.Array):
            return False
        if isinstance(asked, T.Array):
            if (asked.dtype, asked.ndim) != (got.dtype, got.ndim):
                return False
        elif isinstance(asked, T.Scalar) and isinstance(got, T.Scalar):
            if asked.is_float != got.is_float or asked.is_complex != got.is_complex:
                return False
    return True


class Runner:
    """Runs a module's entry points under the hooks that see its kernels' launches."""

    def __init__(self, module, path: str, source: str, plan, describe, type_of, want: dict | None):
        self.module, self.path, self.source, self.plan = module, path, source, plan
        self.describe = describe  # (dispatcher, launched types or None, entry point) -> None
        self.type_of = type_of  # an argument -> its type string
        self.want = want or {}
        self.pending = {(t.name, t.line) for t in plan.targets}
        self.entry = None
        self.importing = False  # the module's own import runs: its launches are seen, and skipped
        self.skipped: list = []  # the lines of the launches skipped while importing
        self.untyped: list = []  # the lines of those whose arguments had no Numba type
        self.run_launches = False  # run them after all: a value the module computes from one a kernel reads
        self.log: list = []

    def target(self, dispatcher):
        key = self._key(dispatcher)
        return key if key in self.pending else None

    def _key(self, dispatcher):
        function = python_function(dispatcher)
        code = getattr(function, "__code__", None)
        if code is None:
            return None
        if os.path.realpath(code.co_filename) == self.path:
            return code.co_name, code.co_firstlineno
        for name, line in self.pending:  # a function a template made (exec), bound to a name of the module
            if line == 0 and self.module is not None and getattr(self.module, name, None) is function:
                return name, 0
        return None

    def _name(self, key):
        """The module's name for the kernel of KEY, where its function is one a template made (line 0)."""
        return key[0] if key[1] == 0 else None

    def skipped_at_import(self, dispatcher, args) -> bool:
        """Whether a launch is one of this file's kernels while the module is imported (a script launching at
        its top level), to be skipped: described at its first launch, as Numba compiles it then, and not run,
        since only its types and values are wanted and a script's workload may take the simulator hours; run
        after all where a value a kernel reads is computed from one (skipped.py)."""
        key = self._key(dispatcher) if self.importing else None
        if key is None:
            return False
        frame = inspect.currentframe()
        while frame is not None and os.path.realpath(frame.f_code.co_filename) != self.path:
            frame = frame.f_back
        if frame is not None and not self.run_launches:  # a value set after it is set without its results
            self.skipped.append(frame.f_lineno)
        if key in self.pending and self._describe_launch(dispatcher, key, args, IMPORT) is None \
                and frame is not None:
            self.untyped.append(frame.f_lineno)
        return not self.run_launches

    def launched(self, dispatcher, args) -> None:
        """A kernel of this file is about to run with ARGS: described, and the entry stopped, if it is wanted."""
        key = self.target(dispatcher)
        if key is not None and self.entry is not None and self._describe_launch(dispatcher, key, args, self.entry):
            raise _Seen()

    def _describe_launch(self, dispatcher, key, args, entry) -> bool | None:
        """Whether the launch of KEY's kernel with ARGS was described (its types agree with --types); None where
        an argument has no Numba type (a stand-in's value), and the launch runs on."""
        try:
            types = [self.type_of(a) for a in args]
        except Exception:  # noqa: BLE001 - a value Numba could not type either
            return None
        if not _matches(types, _parameters(dispatcher), self.want):
            return False
        self.describe(dispatcher, "(" + ", ".join(types) + ")", entry, self._name(key))
        self.pending.discard(key)
        return True

    def made(self, dispatcher, signatures: list) -> None:
        """A dispatcher was made; one compiled at once (SIGNATURES given, as type strings) is described with
        the values now, if a signature agrees with --types."""
        key = self.target(dispatcher)
        if key is None or not signatures or self.entry is None:
            return
        params = _parameters(dispatcher)
        for text in signatures:
            try:
                types = [str(t) for t in T.parse_signature(text)[1]]
            except T.TypeStringError:
                continue
            if _matches(types, params, self.want):
                self.describe(dispatcher, None, self.entry, self._name(key))
                self.pending.discard(key)
                return

    # ------------------------------------------------------------ hooks
    def install(self) -> None:
        runner = self
        try:
            from numba.cuda.simulator import kernel as simulated
        except ImportError:
            simulated = None
        if simulated is not None:
            call = simulated.FakeCUDAKernel.__call__

            def fake_call(self, *args):
                if not self._device and not getattr(simulated, "_kernel_context", None):
                    if runner.skipped_at_import(self, args):
                        return None
                    runner.launched(self, args)
                return call(self, *args)
            simulated.FakeCUDAKernel.__call__ = fake_call
        try:
            from numba.cuda.dispatcher import CUDADispatcher
        except ImportError:
            return
        real = getattr(CUDADispatcher, "call", None)
        if real is not None:
            def gpu_call(self, args, *rest, **kwargs):
                if runner.skipped_at_import(self, args):
                    return None
                runner.launched(self, args)
                return real(self, args, *rest, **kwargs)
            CUDADispatcher.call = gpu_call

    # ------------------------------------------------------------ running
    def run(self) -> list:
        """Each entry point in turn while a kernel is pending and time is left: what happened in each."""
        started = time.monotonic()
        previous = signal.signal(signal.SIGALRM, _alarm)
        try:
            for entry in self.plan.entries:
                left = RUN_SECONDS - (time.monotonic() - started)
                if not self.pending or left <= 1:
                    break
                if not any(entry in self.plan.reaches.get(t.anchor, ()) for t in self.plan.targets
                           if (t.name, t.line) in self.pending):
                    continue
                self.log.append({"entry": entry, "outcome": self._run_one(entry, min(ENTRY_SECONDS, left))})
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        return self.log

    def _run_one(self, entry: str, seconds: float) -> str:
        self.entry = entry
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            while True:
                try:
                    self._call(entry)
                    return "finished"
                except ModuleNotFoundError as exc:  # a test's own `import cffi`: stood in for, as at the import
                    if not stand_in_for(exc, self.path):
                        raise
        except _Seen:
            return "launched"
        except _OutOfTime:
            return f"stopped after {seconds:g} s"
        except unittest.SkipTest as exc:
            return f"skipped ({exc})"
        except BaseException as exc:  # noqa: BLE001 - the user's code failed: noted, the next entry is tried
            said = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            said = said if len(said) <= 160 else said[:157] + "..."
            return f"raised {type(exc).__name__}" + (f" ({said})" if said else "")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self.entry = None

    def _call(self, entry: str) -> None:
        if entry == MAIN_BLOCK:
            code = main_block(self.source, self.path)
            if code is not None:
                exec(code, vars(self.module))  # noqa: S102 - the user's own script, as `python file.py` runs it
            return
        owner, _, name = entry.rpartition(".")
        if not owner:
            function = getattr(self.module, name)
            inspect.unwrap(function)(**first_case(function))
            return
        cls = getattr(self.module, owner)
        found = inspect.getattr_static(cls, name)
        method = inspect.unwrap(found)  # past @skip_on_cudasim and its kin
        if isinstance(cls, type) and issubclass(cls, unittest.TestCase):
            instance = cls(name)
            getattr(cls, "setUpClass", lambda: None)()
            instance.setUp()
            try:
                method(instance)
            finally:
                instance.tearDown()
        else:
            method(cls(), **first_case(found))


def first_case(function) -> dict:
    """The arguments of a test's first case under @pytest.mark.parametrize (its marks, read as pytest reads them),
    or none."""
    arguments = {}
    for mark in reversed(getattr(function, "pytestmark", [])):
        if getattr(mark, "name", "") != "parametrize" or len(mark.args) < 2 or not mark.args[1]:
            continue
        names = mark.args[0]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        case = mark.args[1][0]
        case = getattr(case, "values", case)  # pytest.param(...)
        values = case if len(names) > 1 else (case,)
        arguments.update(zip(names, values))
    return arguments
