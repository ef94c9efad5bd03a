"""One verify run's fixed parts: the runners (child processes), the kernels and what the IR says of them, the
static checks on a given .cu, and the follow-ups after the cases (whose race it is, compute-sanitizer)."""

from __future__ import annotations

from pathlib import Path

from ..errors import UserError
from .facts import kernel_facts
from .runners import CpuRunner, GpuRunner, LaunchFailed
from .static import narrowing_problems


class Session:
    def __init__(self, path: str, device: str, cu_text, cu_path, options, also_cpu: bool, kernel):
        self.path, self.device, self.cu_text, self.cu_path, self.options = path, device, cu_text, cu_path, options
        self.kernel = kernel
        self.runner = (GpuRunner if device == "cuda" else CpuRunner)(path, cu_text, options, cu_path)
        self.cpu_runner = None
        self._fresh_runner = None
        try:
            if also_cpu and device == "cuda":
                self.cpu_runner = CpuRunner(path, cu_text, options, cu_path)
            self.kernels = {fn.c_name: fn for fn in self.runner.program.kernels}
            if kernel and kernel not in self.kernels:
                raise UserError(f"{path}: error: --kernel {kernel}: no translated kernel has that name "
                                f"(kernels: {', '.join(self.kernels) or 'none'})")
            self.facts = {name: kernel_facts(fn) for name, fn in self.kernels.items()}
        except BaseException:
            self.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        for r in (self.runner, self.cpu_runner, self._fresh_runner):
            if r is not None:
                r.close()

    # ---------------------------------------------------------------- before the cases

    def fresh_text(self) -> str | None:
        """The rules' own translation of the module, or None where they do not translate it."""
        from ..emit.render import render_program
        from ..frontend.module import parse_file
        from ..lower.program import build_program

        try:
            return render_program(build_program(parse_file(self.path), self.options), Path(self.path).name)
        except UserError:
            return None

    def static_checks(self, result) -> None:
        if self.cu_text is None:
            return
        fresh = self.fresh_text()
        if fresh is None:
            result.notes.append("the rules do not translate this module: the given translation's integer widths "
                                "were not compared with a faithful one")
            return
        result.problems += narrowing_problems(fresh, self.cu_text)

    def config(self, seeds, sizes, sim_max_threads, dists, oneoff) -> dict:
        from .check import kernel_specialisations

        return {"seeds": seeds, "kernel": self.kernel or "", "specs": kernel_specialisations(self.runner.program, self.kernel),
                "sizes": sizes, "device": "cuda" if self.device == "cuda" else "simulator",
                "sim_max_threads": sim_max_threads, "dists": list(dists), "oneoff": oneoff,
                "facts": {name: f.to_json() for name, f in self.facts.items()}}

    def kernel_of(self, meta):
        name = meta["kernel"]
        if name not in self.kernels:
            raise UserError(f"{self.path}: error: {meta.get('example', 'example')}() runs {name!r}, which is not "
                            f"among the translated kernels ({', '.join(self.kernels) or 'none'})")
        return self.kernels[name]

    @staticmethod
    def suspect(kernel: str, notes: list) -> str:
        """Why the simulator's answer for KERNEL may not be Numba's on the GPU ("" when it is trusted)."""
        for n in notes:
            if n.startswith(f"{kernel} runs in the simulator as written"):
                return "the simulator ran this kernel as written, where NumPy's promotion may differ from Numba's"
        return ""

    # ---------------------------------------------------------------- after the cases

    def attribute_races(self, result) -> None:
        """A race the faithful translation shows too is the original's own: undecided, not the translation's
        fault. (The CPU tier only: the GPU runner does not look for races.)"""
        if self.device == "cuda":
            return
        fresh_runner = None
        for case, (meta, arrays) in zip(result.cases, result.reference):
            races = [p for p in case.problems if "data race on" in p]
            if not races or len(races) != len(case.problems):
                continue
            if self.cu_text is None:
                own = races[0]
            else:
                if fresh_runner is None:
                    fresh = self.fresh_text()
                    if fresh is None:
                        return
                    fresh_runner = self._fresh_runner = CpuRunner(self.path, fresh, self.options)
                own = self._race_of(fresh_runner, meta, arrays)
            if own:
                case.problems = [p for p in case.problems if p not in races]
                case.undecided.append(f"the original itself has a data race (its faithful translation shows it: "
                                      f"{own.split(': ', 1)[-1]})")

    @staticmethod
    def _race_of(runner, meta, arrays) -> str:
        from .check import FILLS, launch_args, launch_config

        inputs = {int(k[3:]): v for k, v in arrays.items() if k.startswith("arg")}
        for which, (_, _, poison, order) in enumerate(FILLS):
            try:
                runner.run(meta["kernel"], *launch_config(meta), launch_args(meta, inputs, which), poison, order)
            except LaunchFailed as exc:
                if "data race on" in str(exc):
                    return str(exc)
        return ""

    def sanitize(self, result) -> None:
        from .sanitize import run_sanitizers

        if self.device != "cuda":
            result.notes.append("--sanitize runs compute-sanitizer on the GPU tier only (the CPU runtime checks "
                                "memory and races itself)")
            return
        problems, notes = run_sanitizers(self.runner.load, self.kernels, result.reference)
        result.problems += problems
        result.notes += notes
