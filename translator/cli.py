"""command line -> the stages' commands: `numba2cuda translate FILE` and friends, assembled from each stage's own
parser; user errors exit 2 without a traceback, a bug in numba2cuda exits 70 with one.

What every command shares is added here, on top of the stages' parsers: --quiet (no progress bars), the
extra a command needs (translator/extras.py), warnings for misspelt settings, `-` for standard input, and
folders, globs and several modules for translate, verify and bench (translator/batch.py, verify/batch.py,
bench/batch.py), which run the single-module command once per module.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

from . import batch, doctor, extras, progress
from .version import versions_text
from .atomic import write_atomically
from .bench import batch as bench_batch
from .bench import cli as bench_cli
from .errors import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, EXIT_VERDICT, NotVerified, UserError
from .llm import cli as translate_cli
from .llm.backend import translate_module, verify_translation
from .llm.client import process_started
from .llm.config import add_llm_options, api_key_withheld
from .lower.options import options_from
from .package import cli as package_cli
from .package.torchfile import render_torch_module
from .settings import warn_unknown_settings
from .verify import cli as verify_cli

#: commands whose FILE may be several modules, a folder or a glob
BATCH_COMMANDS = ("translate", "verify", "bench")


class VersionAction(argparse.Action):
    """--version: the tool and whatever of torch, numba, numba-cuda and the CUDA toolkit is installed."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        nvcc = doctor.tool_checks()["nvcc"]
        print(versions_text(nvcc.data.get("release") if nvcc.ok else None))
        parser.exit()


# --------------------------------------------------------------------------- what a command needs


def required_extra(args) -> tuple[str, str] | None:
    """(extra, why) the parsed command cannot run without, or None."""
    command = args.command
    if command == "verify":
        return "verify", "the Numba original is the reference"
    if command == "bench":
        return "bench", "bench times the Numba original and the torch extension on the GPU"
    if command == "build":
        return "build", "the extension is built with torch"
    if command == "package" and getattr(args, "wheel", False):
        return "build", "the wheel is built with torch.utils.cpp_extension"
    return None


def check_extras(args) -> None:
    need = required_extra(args)
    if need is not None:
        extras.require(need[0], args.command, need[1])
    if args.command == "verify" and getattr(args, "device", None) == "cuda":
        extras.require("build", "verify --device cuda", "the translation runs as a torch extension")


def input_paths(args) -> list[str]:
    value = getattr(args, "file", None) or []
    return [value] if isinstance(value, str) else list(value)


def normalise_inputs(args) -> None:
    """A batch command given one plain module runs as before (args.file a str); a single-module command given a
    folder or a glob is a usage error, not a traceback."""
    files = getattr(args, "file", None)
    if isinstance(files, list) and not batch.is_batch(files):
        args.file = files[0]
    file = getattr(args, "file", None)
    if isinstance(file, str) and file != "-":
        if os.path.isdir(file) or (batch.is_glob(file) and not os.path.exists(file)):
            where = "translate, verify and bench take folders and globs" if args.command not in BATCH_COMMANDS else ""
            raise UserError(f"{file}: error: numba2cuda {args.command} takes one module (a .py file), and this "
                            f"is {'a folder' if os.path.isdir(file) else 'a pattern'}"
                            + (f"\n    hint: {where}" if where else ""))
    if file == "-" and args.command != "translate":
        raise UserError(f"numba2cuda {args.command}: error: - (standard input) is read by translate only: "
                        f"{args.command} imports and runs the module, which needs a file")


@contextlib.contextmanager
def stdin_module(args):
    """`translate -`: the module read from standard input, as a file in a temporary folder (errors name it
    <stdin>); without -o the translation goes to standard output, as a filter's does."""
    if args.file != "-":
        yield
        return
    source = sys.stdin.read()
    with tempfile.TemporaryDirectory(prefix="numba2cuda-stdin-") as folder:
        path = os.path.join(folder, "stdin.py")
        Path(path).write_text(source, encoding="utf-8")
        args.file = path
        if args.output is None:
            args.output = "-"
        try:
            yield
        except UserError as exc:
            raise UserError(exc.text.replace(path, "<stdin>")) from None


# --------------------------------------------------------------------------- translate


def cmd_translate(args) -> int:
    if isinstance(args.file, list):
        return batch.translate(args)
    with stdin_module(args):
        if args.emit == "torch":
            return emit_torch(args)
        return translate_cli.cmd_translate(args)


def emit_torch(args) -> int:
    """`translate --emit torch`: one Python file with the sources, the binding and a load_inline call."""
    program, cu_text = translate_module(args.file, options_from(args), args)  # by rules; the model only for the rest
    text = render_torch_module(args.file, program, cu_text)
    out = args.output or batch.translation_name(args.file, "torch")
    if out == "-":
        sys.stdout.write(text)
        return EXIT_OK
    if not Path(out).parent.exists():
        raise UserError(f"{out}: error: the directory {Path(out).parent} does not exist")
    write_atomically(out, text)
    kernels = translate_cli.kernels_named([k.c_name for k in program.kernels])
    print(f"wrote {out} ({kernels}; needs torch and nvcc; import it to build)", file=sys.stderr)
    return EXIT_OK


def cmd_verify(args) -> int:
    """verify, with the LLM backend: where the rules reject a kernel, the model's verified translation is checked."""
    if isinstance(args.file, list):  # a batch: each module's own verify (in its own process) does that
        return verify_cli.cmd_verify(args)
    with verify_translation(args) as args:
        return verify_cli.cmd_verify(args)


def cmd_bench(args) -> int:
    if isinstance(args.file, list):
        return bench_batch.run(args)
    return bench_cli.cmd_bench(args)


# --------------------------------------------------------------------------- the parser


def _action(parser, dest: str) -> argparse.Action:
    return next(a for a in parser._actions if a.dest == dest)


def accept_batches(parser, *, jobs: bool) -> None:
    """FILE becomes FILE... (modules, folders, globs); -j N runs that many at a time."""
    file = _action(parser, "file")
    file.nargs = "+"
    file.metavar = "FILE"
    file.help = (file.help or "") + "; or several, a folder (its modules with @cuda.jit kernels) or a glob"
    if jobs:
        parser.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                            help="with several modules: run N at a time, each in its own process (default 1)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="numba2cuda", description="Translate Numba CUDA kernels into readable CUDA C.",
        epilog="The translator reads the module with libcst and does not import or run it, unless asked to with "
               "--import-module (then in a sandboxed child process, as running it would).")
    parser.add_argument("--version", action=VersionAction,
                        help="print numba2cuda's version and those of torch, numba, numba-cuda and CUDA found here")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    translate_cli.add_parsers(sub)  # translate, build
    package_cli.add_parser(sub)
    v = verify_cli.add_parser(sub)
    add_llm_options(v)
    v.set_defaults(func=cmd_verify)
    bench_cli.add_parser(sub)
    doctor.add_parser(sub)

    t = sub.choices["translate"]
    accept_batches(t, jobs=True)
    emit = _action(t, "emit")
    emit.choices = [*emit.choices, "torch"]
    emit.help += ("; torch: one Python file that builds the kernels with torch's load_inline and launches them "
                  "like Numba, needing torch alone")
    _action(t, "file").help += "; - reads standard input"
    t.set_defaults(func=cmd_translate)
    accept_batches(v, jobs=True)
    b = sub.choices["bench"]
    accept_batches(b, jobs=False)  # one GPU: modules are timed one after another
    b.set_defaults(func=cmd_bench)
    for command in sub.choices.values():  # every command: --quiet switches the progress bars off
        if "--quiet" not in command._option_string_actions:
            command.add_argument("-q", "--quiet", action="store_true",
                                 help="no progress bars (they are drawn only on a terminal's stderr anyway)")
    return parser


def main(argv=None) -> int:
    entry = argv is None  # this process is the command (the console script, python -m translator or numba2cuda)
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = argv  # a batch runs each module with the same options
    # --llm-budget bounds the whole command: for the process that is the command, the interpreter's start-up
    # included; for a caller running commands in-process, from here
    args.started = process_started() if entry else time.monotonic()
    if getattr(args, "quiet", False):
        progress.set_quiet(True)
    rc = run(args)
    if entry and "openai" in sys.modules:
        # the interpreter's teardown of the ~800 modules openai imports takes about a second, which a command
        # asked to keep to --llm-budget cannot spend: everything is written and closed by now
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)
    return rc


def run(args) -> int:
    try:
        warn_unknown_settings([p for p in input_paths(args) if p != "-"])
        normalise_inputs(args)
        check_extras(args)
        with api_key_withheld():  # no subprocess of any command inherits the LLM backend's key
            return args.func(args)
    except UserError as exc:
        print(exc.text, file=sys.stderr)
        return EXIT_USAGE
    except NotVerified as exc:  # the LLM backend found no translation that passes build + verify
        print(exc.text, file=sys.stderr)
        return EXIT_VERDICT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception:  # a bug in numba2cuda, not in the user's kernel: say so, with the traceback
        traceback.print_exc()
        print("numba2cuda: internal error; please report it with the file that caused it", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
