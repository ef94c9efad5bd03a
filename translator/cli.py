"""command line -> the stages' commands: `numba2cuda translate FILE` and friends, assembled from each stage's own
parser; user errors exit 2 without a traceback, a bug in numba2cuda exits 70 with one."""

from __future__ import annotations

import argparse
import sys
import traceback

from .version import __version__
from .bench import cli as bench_cli
from .errors import EXIT_INTERNAL, EXIT_USAGE, EXIT_VERDICT, NotVerified, UserError
from .llm import cli as translate_cli
from .llm.backend import verify_translation
from .llm.config import add_llm_options, api_key_withheld
from .package import cli as package_cli
from .verify import cli as verify_cli


def cmd_verify(args) -> int:
    """verify, with the LLM backend: where the rules reject a kernel, the model's verified translation is checked."""
    with verify_translation(args) as args:
        return verify_cli.cmd_verify(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="numba2cuda", description="Translate Numba CUDA kernels into readable CUDA C.",
        epilog="The translator reads the module with libcst and never imports or runs it.")
    parser.add_argument("--version", action="version", version=f"numba2cuda {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    translate_cli.add_parsers(sub)  # translate, build
    package_cli.add_parser(sub)
    v = verify_cli.add_parser(sub)
    add_llm_options(v)
    v.set_defaults(func=cmd_verify)
    bench_cli.add_parser(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
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
