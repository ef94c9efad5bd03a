"""One verify run's fixed parts: the runners (child processes), the kernels and what the IR says of them, the
static checks on a given .cu, and the follow-ups after the cases (whose race it is, compute-sanitizer)."""

from __future__ import annotations

from pathlib import Path

from ..errors import UserError
from ..lower.names import entry_name
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
            program = self.runner.program
            # by the names a launch uses (lower/names.py: entry_name); a kernel with several signatures is
            # reached by its Python name too, and a ufunc by its own name (its kernels carry the steps)
            self.kernels = {entry_name(fn): fn for fn in program.kernels}
            self.labels = {name: [p.name for p in fn.python_params] for name, fn in self.kernels.items()}
            for name, uf in getattr(program, "ufuncs", {}).items():
                self.kernels[name] = next(fn for fn in program.kernels if entry_name(fn) == uf.loops[0].kernel)
                self.labels[name] = list(program.info.functions[name].params) + (["out"] if uf.kind == "vectorize"
                                                                                  else [])
            pythons = {getattr(fn, "python_name", None) for fn in program.kernels}
            if kernel and kernel not in self.kernels and kernel not in pythons:
                raise UserError(f"{path}: error: --kernel {kernel}: no translated kernel has that name "
                                f"(kernels: {', '.join(self.kernels) or 'none'})")
            ufuncs = getattr(program, "ufuncs", {})  # a ufunc's arguments are not its kernels' parameters
            self.facts = {name: kernel_facts(fn) for name, fn in self.kernels.items() if name not in ufuncs}
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
            program = build_program(parse_file(self.path, self.options.import_module, self.options), self.options)
            return render_program(program, Path(self.path).name)
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

    def kernel_of(self, meta, arrays):
        """The kernel a case launches; for a kernel with several signatures (one C function each), the one whose
        array parameters take the case's arrays, as Numba's dispatcher picks (meta["kernel"] then names it)."""
        name = meta["kernel"]
        if name in self.kernels:
            return self.kernels[name]
        args = {int(k[3:]): v for k, v in arrays.items() if k.startswith("arg")}
        for fn in self.runner.program.kernels:
            if getattr(fn, "python_name", None) == name and all(
                    p.array is None or (k in args and str(args[k].dtype) == p.type.dtype.name
                                        and args[k].ndim == p.type.ndim) for k, p in enumerate(fn.python_params)):
                meta["kernel"] = entry_name(fn)
                return fn
        raise UserError(f"{self.path}: error: {meta.get('example', 'example')}() runs {name!r}, which is not "
                        f"among the translated kernels ({', '.join(self.kernels) or 'none'})")

    @staticmethod
    def suspect(kernel: str, notes: list, meta: dict | None = None) -> str:
        """Why the simulator's answer for KERNEL may not be Numba's on the GPU ("" when it is trusted)."""
        if meta is not None and meta.get("as_written"):
            return "the simulator ran this kernel as written, where NumPy's promotion may differ from Numba's"
        for n in notes:
            if n.startswith(f"{kernel} runs in the simulator as written"):
                return "the simulator ran this kernel as written, where NumPy's promotion may differ from Numba's"
        return ""

    # ---------------------------------------------------------------- after the cases

    def attribute_to_original(self, result) -> None:
        """A data race, or an output that depends on the order threads run in, that the faithful translation
        shows too is the original's own: the case is undecided (the original is not deterministic there), not
        the translation's fault. The CPU tier only: the GPU runner neither finds races nor varies the order."""
        if self.device == "cuda":
            return
        for case, (meta, arrays) in zip(result.cases, result.reference):
            races = [p for p in case.problems if "data race on" in p]
            ordered = [p for p in case.problems if "differs between the two runs" in p]
            if not races and not ordered:
                continue
            if self.cu_text is None:  # the translation checked is the faithful one
                race = races[0] if races else ""
                labels = {p.split("output ", 1)[1].split(" differs", 1)[0] for p in ordered}
            else:
                runner = self._fresh()
                if runner is None:
                    return
                race, labels = self._behaviour(runner, meta, arrays)
            if race and races:
                case.problems = [p for p in case.problems if p not in races]
                case.undecided.append("the original itself has a data race (its faithful translation shows it: "
                                      f"{race.split(': ', 1)[-1]})")
            for label in sorted(labels):
                mine = [p for p in case.problems if p.startswith(f"output {label}")]
                if mine:
                    case.problems = [p for p in case.problems if p not in mine]
                    case.undecided.append(f"the original's output {label} depends on the order its threads run in "
                                          "(its faithful translation's two runs differ too): not deterministic")

    def corroborate_reference(self, result, tolerance=None) -> None:
        """An output that disagrees with a reference the simulator could not vouch for (it ran the kernel as
        written: example()'s expected, or the run itself, may follow NumPy's promotion where Numba's typing
        differs) is undecided. The faithful translation computes in Numba's types throughout: where it passes
        the very same check on the case (same reference, same acceptance, every output, both runs), that
        reference is what Numba's types give there, and the given translation's disagreement is a verdict. The
        CPU tier only (the faithful translation runs on the CPU runtime), and never for the faithful
        translation itself (it cannot vouch for its own reference)."""
        from .check import NOT_DECIDED, check_case

        if self.device == "cuda" or self.cu_text is None:
            return
        for case, (meta, arrays) in zip(result.cases, result.reference):
            pending = [u for u in case.undecided if NOT_DECIDED in u]
            if not pending or len(pending) < len(case.undecided):
                continue  # nothing to decide, or undecided for another reason too (no reference, a race)
            runner = self._fresh()
            if runner is None:
                return
            name = meta["kernel"]
            try:
                faithful = check_case(runner, meta, arrays, self.labels[name], self.device, self.kernels.get(name),
                                      facts=self.facts.get(name), tolerance=tolerance,
                                      suspect=self.suspect(name, result.notes, meta))
            except LaunchFailed:
                continue
            if faithful.problems or faithful.undecided:
                continue
            case.undecided = []
            case.problems += [u.split(NOT_DECIDED, 1)[0] + " (decided: the faithful translation, in Numba's types, "
                              "matches this reference on this case)"
                              for u in pending]

    def _fresh(self):
        if self._fresh_runner is None:
            fresh = self.fresh_text()
            if fresh is None:
                return None
            self._fresh_runner = CpuRunner(self.path, fresh, self.options)
        return self._fresh_runner

    def _behaviour(self, runner, meta, arrays) -> tuple[str, set]:
        """(the race the faithful translation runs into on this case, or "", labels of the outputs its two runs
        leave different where the original's two pre-fills leave them alike)."""
        from .check import FILLS, launch_args, launch_config, only_unwritten, prefill

        inputs = {int(k[3:]): v for k, v in arrays.items() if k.startswith("arg")}
        runs = []
        for which, (_, _, poison, order) in enumerate(FILLS):
            try:
                runs.append(runner.run(meta["kernel"], *launch_config(meta), launch_args(meta, inputs, which),
                                       poison, order))
            except LaunchFailed as exc:
                return (str(exc) if "data race on" in str(exc) else ""), set()
        names = self.labels[meta["kernel"]]
        labels = set()
        for i in meta["outputs"]:
            first, second = arrays.get(f"orig0_{i}"), arrays.get(f"orig1_{i}", arrays.get(f"orig0_{i}"))
            same = first is None or second is None or first.tobytes() == second.tobytes()
            if same and runs[0][i].tobytes() != runs[1][i].tobytes() \
                    and not only_unwritten(runs[0][i], runs[1][i], *(prefill(meta, i, runs[k][i], k) for k in (0, 1))):
                labels.add(f"{names[i]} (arg {i})" if i < len(names) else f"arg {i}")
        return "", labels

    def sanitize(self, result) -> None:
        from .sanitize import run_sanitizers

        if self.device != "cuda":
            result.notes.append("--sanitize runs compute-sanitizer on the GPU tier only (the CPU runtime checks "
                                "memory and races itself)")
            return
        problems, notes = run_sanitizers(self.runner.load, self.kernels, result.reference)
        result.problems += problems
        result.notes += notes
