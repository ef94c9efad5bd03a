"""kernels the rules reject -> verified CUDA C from an OpenAI-compatible model: the backend choice, the repair loop and its gate.

`auto` (the default) translates by rules and sends only the kernels the rules reject to the model,
saying so; `llm` sends every selected kernel; `rules` never calls a model. For each kernel the model
gets the prompt of prompts/translate.j2 and answers with device code only; the answer is parsed and
checked against the allow-list (check.py), spliced into the file our templates write around a
shell of the kernel (lower/shells.py), compiled for the CPU runtime (and with nvcc when it is on PATH),
and verified against the Numba original on the module's example(). A failure of any stage goes back
to the model as a repair request (prompts/repair.j2), up to --llm-attempts answers per kernel and
--llm-budget seconds in all. Only a translation that passed is returned; otherwise NotVerified
(exit 1) with every attempt's reason, and the caller writes nothing.
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from ..emit.render import translated_how
from ..runtime.dropin import extension_name
from ..errors import NotVerified, UserError
from ..frontend.module import ModuleInfo, parse_file, reparse
from .cache import CacheEntryError, LLMCache, request_key
from .check import MAX_ANSWER_CHARS, AnswerError, check_code, extract_code, helper_functions, tokens
from .client import Budget, BudgetSpent, ChatClient, ServiceError, hard_deadline
from .redact import redact
from .config import ENABLE_HINT, LLMSettings, api_key_withheld, settings_from
from ..lower.selection import selected_kernels
from ..lower.shells import assemble, kernel_types, rejected_kernels, types_known
from .facts import KernelJob, make_job, reserved_names
from .names import DYNAMIC_SMEM
from .gate import Outcome, compile_gate, verify_gate
from .prompts import first_messages, prompt_version, repair_message
from ..lower.program import Options, Program, build_program
from ..emit.render import render_program


def translate_module(path, options: Options, args, log=None) -> tuple[Program, str]:
    """(program, .cu text) of the module at PATH by the backend ARGS choose (see add_llm_options)."""
    settings = settings_from(args, path)
    info = parse_file(path, options.import_module, options)
    rules_error = None
    if settings.backend in ("rules", "auto"):
        program, rules_error = _by_rules(info, options)
        if program is not None:
            return program, render_program(program, Path(path).name)
        if settings.backend == "rules":
            raise rules_error
    return _model_translation(path, info, options, settings, rules_error, log)


def _by_rules(info: ModuleInfo, options: Options) -> tuple[Program | None, UserError | None]:
    """(program, None) when the rules translate the module; (None, their located errors) when they reject
    a kernel. Any other error (no located diagnostics) is raised: the model could not help there."""
    try:
        return build_program(info, options), None
    except UserError as exc:
        if not exc.diagnostics:
            raise
        return None, exc


def _model_translation(path, info: ModuleInfo, options: Options, settings: LLMSettings, rules_error,
                       log=None) -> tuple[Program, str]:
    """(program, .cu text) with the kernels the model is asked for (see kernels_for_the_model) verified."""
    fresh = reparse(info)
    to_model = kernels_for_the_model(fresh, options, settings, rules_error)
    require_ready(fresh, path, settings, rules_error)
    with api_key_withheld():  # for callers other than the CLI (which withholds the key for the whole command)
        run = LLMRun(path, options, settings, log or _stderr)
        if settings.started is None:  # an API call: every step keeps to the budget, no alarm in the caller's process
            return run.translate(fresh, to_model)
        try:
            with hard_deadline(run.budget):  # a command: its whole run, the interpreter's start-up included
                return run.translate(fresh, to_model)
        except BudgetSpent:
            raise NotVerified(f"{Path(path).name}: error: no verified translation: the time budget of "
                              f"{settings.budget:g} s is spent (--llm-budget); nothing written") from None


def kernels_for_the_model(info: ModuleInfo, options: Options, settings: LLMSettings, rules_error) -> dict:
    """{kernel: the rules' diagnostics} of the kernels the model is asked for: under auto the ones the rules
    reject, under llm all selected. Raises the rules' report where a model cannot help."""
    if info.reporter.diagnostics:  # decorator or declaration problems: the rules' report stands
        raise rules_error or UserError(info.reporter.diagnostics)
    if not settings.configured:  # no model to ask: the report, and how to ask one unless types are missing
        untyped = [fi.key for fi in selected_kernels(info, options) if not types_known(info, fi.key, options)]
        if untyped and rules_error is not None:  # no trial translation per kernel (a module of 200 took minutes)
            raise rules_error
        return {}
    rejected = rejected_kernels(info, options)
    if settings.backend == "llm":
        to_model = {fi.key: rejected.get(fi.key, []) for fi in selected_kernels(info, options)}
    elif rejected:
        to_model = rejected
    else:  # each kernel translates alone, not together: nothing for a model to do
        raise rules_error
    untyped = [name for name in to_model if not types_known(info, name, options)]
    if untyped:  # a model cannot be told a signature nobody knows: the located report says how to give types
        if rules_error is None:
            kernel_types(info, info.functions[untyped[0]], options)  # raises it
        raise rules_error
    return to_model


def require_ready(info: ModuleInfo, path, settings: LLMSettings, rules_error) -> None:
    """A model to ask, and an example() to verify its answers with."""
    if not settings.configured:
        if rules_error is not None:
            raise UserError(f"{rules_error.text}\n    hint: {ENABLE_HINT}") from None
        raise UserError(f"numba2cuda: error: --backend llm: {settings.not_configured()}\n    hint: {ENABLE_HINT}")
    if not _has_example(info):
        raise UserError(f"{path}: error: the LLM backend keeps a model's translation only once `numba2cuda verify` "
                        "has found it equivalent to the Numba original, which needs example(rng, size) in the "
                        "module\n    hint: add one below the kernels (see README 'Verify' and kernels/*.py)")


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _has_example(info: ModuleInfo) -> bool:
    return any(isinstance(s, cst.FunctionDef) and s.name.value == "example" for s in info.module.body)


@dataclass
class LLMRun:
    path: str
    options: Options
    settings: LLMSettings
    log: object
    budget: Budget = field(init=False)
    cache: LLMCache = field(init=False)
    _client: ChatClient | None = field(init=False, default=None)

    def __post_init__(self):
        self.budget = Budget(self.settings.budget, start=self.settings.started)
        self.cache = LLMCache(self.settings.cache_dir)
        self.name = Path(self.path).name
        if not self.settings.replay:
            self._check_cache_writable()

    # ------------------------------------------------------------ the module
    def translate(self, info: ModuleInfo, to_model: dict) -> tuple[Program, str]:
        s = self.settings
        program, shells = assemble(info, self.options, to_model)
        reserved = reserved_names(program) - {sh.c_name for sh in shells}
        jobs = [make_job(info, sh, self.options, to_model[sh.c_name],
                         reserved | {other.c_name for other in shells if other is not sh}) for sh in shells]
        ruled = [fn.c_name for fn in program.kernels if fn not in shells]
        program.provenance = self._provenance(ruled, [job.name for job in jobs], translated_how(info))
        self.log(f"note: the LLM backend runs {self.name}'s example() to verify each answer (the Numba original in "
                 "the CUDA simulator, in a subprocess); numba2cuda's rules never run your module")
        text = ""
        for k, job in enumerate(jobs):
            why = f"the rules do not translate kernel '{job.name}' ({job.facts['unsupported'][0].splitlines()[0]})" \
                if job.diagnostics else f"--backend llm: kernel '{job.name}'"
            self.log(f"note: {why}; asking the model {s.model} at {'the replay cache' if s.replay else s.where()} "
                     f"(prompt version {prompt_version()}, up to {s.attempts} attempt{'s' * (s.attempts != 1)}, "
                     f"{s.budget:g} s budget)")
            for later in jobs[k + 1:]:  # not yet written: left out of this job's file
                program.kernels.remove(later.shell)
            text = self._solve(job, program)
            for later in jobs[k + 1:]:
                program.kernels.append(later.shell)
            reserved |= _function_names(job.shell.external_code)
            for later in jobs[k + 1:]:
                later.facts["reserved"] = sorted(set(later.facts["reserved"]) | reserved)
        program.llm_provenance = dict(backend=s.backend, model=s.model, prompt_version=prompt_version(),
                                      answers={job.name: job.answer_sha256 for job in jobs})
        return program, text

    def _provenance(self, ruled: list[str], modelled: list[str], how: str) -> list[str]:
        lines = []
        if ruled:
            lines.append(f"Kernel{'s' * (len(ruled) != 1)} {', '.join(ruled)}: translated by rules, {how}.")
        lines += [f"Kernel{'s' * (len(modelled) != 1)} {', '.join(modelled)}: written by the model "
                  f"{self.settings.model} (numba2cuda prompt version {prompt_version()}), kept",
                  "only after `numba2cuda verify` found it equivalent to the Numba original on the module's example().",
                  "Edit the Python and translate again, or tune this file and check it with",
                  f"`numba2cuda verify {self.name} --cu THIS_FILE`."]
        return lines

    # ------------------------------------------------------------ one kernel: the repair loop
    def _solve(self, job: KernelJob, program: Program) -> str:
        s = self.settings
        messages = first_messages(job.facts)
        failures = []
        for attempt in range(1, s.attempts + 1):
            if self.budget.left() <= 0:
                failures.append(f"stopped: the time budget of {s.budget:g} s is spent (--llm-budget)")
                break
            answer = self._ask(messages, job, attempt)
            outcome = self._gate(job, program, answer, set(job.facts["reserved"]))
            self.log(f"  {job.name} attempt {attempt}/{s.attempts}: {outcome.summary}")
            if outcome.ok:
                job.answer_sha256 = hashlib.sha256(answer.encode("utf-8")).hexdigest()
                return outcome.text
            failures.append(f"attempt {attempt}: {outcome.summary}")
            messages = messages + [{"role": "assistant", "content": _for_history(answer)},
                                   repair_message(outcome.kind, outcome.detail, job.signature)]
        raise NotVerified("\n".join(
            [f"{self.name}: error: no verified translation of kernel '{job.name}' from the model {s.model} "
             f"(prompt version {prompt_version()}); nothing written"]
            + [f"    {line}" for line in failures]
            + ["    hint: try another model (--model), more attempts (--llm-attempts), or rewrite the kernel with "
               "what the rules translate (README 'Supported kernel language')"]))

    def _ask(self, messages: list, job: KernelJob, attempt: int) -> str:
        s = self.settings
        request = {"model": s.model, "messages": messages, "parameters": s.parameters(),
                   "prompt_version": prompt_version()}
        key = request_key(request)
        what = "translate" if attempt == 1 else f"repair {attempt - 1}"
        try:
            hit = None if s.refresh else self.cache.get(key)
        except CacheEntryError as exc:
            if s.replay:
                raise UserError(f"numba2cuda: error: --replay: {exc}") from None
            self.log(f"  note: {exc}; asking again and recording over it")
            hit = None
        if hit is not None and not hit["content"].strip():  # recorded before empty answers stopped being kept
            hit = None
        if hit is not None:
            self.log(f"  {job.name} attempt {attempt}/{s.attempts}: answer replayed from the cache ({key[:12]})")
            return redact(hit["content"], s.api_key)
        if s.replay:
            raise UserError(
                f"{self.name}: error: --replay: the cache {s.cache_dir} has no answer for request {key[:16]} (kernel "
                f"'{job.name}', {what}, model {s.model}, prompt version {prompt_version()})\n    hint: record it by "
                "running the same command without --replay against the server (OPENAI_BASE_URL, NUMBA2CUDA_MODEL); "
                "a different model, prompt version, kernel source or compiler message makes a different request")
        try:
            answer = self._client_for().complete(s.model, messages, s.parameters(), self.budget)
        except ServiceError as exc:
            raise NotVerified(f"{self.name}: error: the model could not be asked for kernel '{job.name}' ({what}): "
                              f"{exc.text}; nothing written" + (f"\n    hint: {exc.hint}" if exc.hint else "")) \
                from None
        # before anything keeps or runs it: every field a server sends back (an echo may hide in "model" too)
        answer = {k: redact(v, s.api_key) if isinstance(v, str) else v for k, v in answer.items()}
        if answer["content"].strip():  # an empty answer is a failed request, asked again next time
            self.cache.put(key, request, answer)
        return answer["content"]

    def _client_for(self) -> ChatClient:
        if self._client is None:
            self._client = ChatClient(self.settings)
        return self._client

    def _check_cache_writable(self) -> None:
        root = self.settings.cache_dir
        try:
            root.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=root, prefix=".probe-"):
                pass
        except OSError as exc:
            raise UserError(f"numba2cuda: error: the LLM cache {root} is not writable ({exc.strerror}): every request "
                            "and answer is recorded there\n    hint: choose another with --llm-cache DIR") from None

    # ------------------------------------------------------------ the gate
    def _gate(self, job: KernelJob, program: Program, answer: str, reserved: set) -> Outcome:
        try:
            code = extract_code(answer)
        except AnswerError as exc:
            return Outcome(False, "answer", exc.text, f"no usable code: {exc.text}")
        problems = check_code(code, job.signature, reserved, job.shell.external_constants)
        if problems:
            return Outcome(False, "allow-list", problems, f"rejected by the allow-list: {'; '.join(problems[:3])}"
                           + (f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""))
        job.shell.external_code = self._header(job, code) + code
        helpers = set(program.helpers)
        program.helpers |= helpers_called(code)
        kept = False
        try:
            text = render_program(program, self.name)
            stem = extension_name(self.path) or "module"
            outcome = compile_gate(text, stem, self.budget.left()) or \
                verify_gate(self.path, text, self.options, job.name, self.budget.left())
            kept = outcome.ok
            return outcome
        finally:
            if not kept:  # only verified code stays in the program
                job.shell.external_code = None
                program.helpers = helpers

    def _header(self, job: KernelJob, code: str) -> str:
        return answer_header(self.name, job, self.settings.model, code)


def answer_header(source_name: str, job: KernelJob, model, code: str) -> str:
    """Ours, above the model's CODE: where it comes from, the headers of the constants prompts/system.j2 offers,
    and the dynamic shared memory every kernel shares (check.py refuses an answer's own)."""
    line = job.facts["source"].split(" | ", 1)[0].strip()
    model = "".join(c if c.isprintable() else "?" for c in str(model))
    text = (f"// {source_name}:{line}: kernel {job.name}, written by the model {model} "
            f"(numba2cuda prompt version {prompt_version()})\n#include <cfloat>\n#include <climits>\n")
    if any(t.text == DYNAMIC_SMEM for t in tokens(code)):
        text += f"extern __shared__ __align__(16) unsigned char {DYNAMIC_SMEM}[];\n"
    return text


def helpers_called(code: str) -> set[str]:
    """The n2c_helpers.cuh sections CODE calls as n2c::NAME, with the sections those need."""
    from ..frontend.call import HELPER_DEPENDENCIES

    toks, functions, out = tokens(code), helper_functions(), set()
    for i in range(len(toks) - 2):
        if toks[i].text == "n2c" and toks[i + 1].text == "::" and toks[i + 2].text in functions:
            section = functions[toks[i + 2].text]
            out |= {section} | set(HELPER_DEPENDENCIES.get(section, ()))
    return out


def _for_history(answer: str) -> str:
    """The answer as the conversation keeps it: a huge one is not sent back."""
    return answer if len(answer) <= MAX_ANSWER_CHARS else f"[an answer of {len(answer)} characters, not repeated]"


def _function_names(code: str | None) -> set[str]:
    toks = tokens(code or "")
    return {toks[i - 1].text for i, t in enumerate(toks)
            if t.text == "(" and i >= 2 and toks[i - 2].kind == "ident" and toks[i - 1].kind == "ident"
            and any(x.text in ("__device__", "__global__") for x in toks[max(0, i - 8):i])}


# ------------------------------------------------------------------ the verify command

@contextmanager
def verify_translation(args):
    """`numba2cuda verify`: when the chosen backend needs the model, its verified translation is what is
    verified (as if given with --cu); otherwise ARGS pass through unchanged."""
    settings = settings_from(args, args.file)
    if getattr(args, "cu", None) or settings.backend == "rules" or getattr(args, "args", None):
        yield args
        return
    from ..verify.cli import options_of  # --kernel, --types and --import-module, as verify itself reads them

    options = options_of(args)
    info = parse_file(args.file, options.import_module, options)
    rules_error = None
    if settings.backend == "auto":
        program, rules_error = _by_rules(info, options)
        if program is not None:
            yield args
            return
    _, text = _model_translation(args.file, info, options, settings, rules_error)
    with tempfile.TemporaryDirectory(prefix="n2c-llm-") as tmp:
        cu = Path(tmp) / f"{Path(args.file).stem}.llm.cu"
        cu.write_text(text, encoding="utf-8")
        args.cu = str(cu)
        yield args
