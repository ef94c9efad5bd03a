"""command line -> pipeline stages: `numba2cuda translate FILE` and friends; user errors exit 2 without a traceback."""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

from . import __version__
from .atomic import write_atomically
from .errors import NotVerified, UserError
from .frontend import parse_file
from .irdump import format_program
from .llm_config import add_llm_options, api_key_withheld
from .lower import Options, build_program
from . import specialize
from .typesys import TypeStringError, parse_types_option
from .verify_cli import add_verify_arguments

EXIT_OK, EXIT_VERDICT, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 70

TYPES_HELP = """argument types as Numba spells them, for kernels without a signature:
"m=float32[:, ::1], n=float32[:, ::1], out=float32[:, ::1], tw=int32".
Scalars: bool int8 int16 int32 int64 uint8..uint64 float32 float64 (and f4, i8, intp ...).
Arrays: DTYPE[:] or DTYPE[::1] for 1-D, DTYPE[:, :] or DTYPE[:, ::1] for 2-D, and so on.
Overrides the decorator's signature and parameter annotations."""


def options_from(args) -> Options:
    options = Options(kernels=args.kernel or [], assume_nonnegative=not args.no_assume_nonnegative)
    if args.types:
        try:
            options.types = parse_types_option(args.types)
        except TypeStringError as exc:
            raise UserError(f"--types: error: {exc}\n    hint: write name=type pairs, e.g. "
                            "\"m=float32[:, ::1], tw=int32\" (see numba2cuda translate --help)") from None
    for spec in args.specialize or []:
        options.specialize.update(specialize.parse_option(spec))
    return options


def cmd_build(args) -> int:
    """Translate and build the torch extension ahead of time, so numba2cuda.load() finds it cached."""
    try:
        import torch  # noqa: F401
    except ImportError:
        raise UserError("numba2cuda build: error: PyTorch is not installed\n"
                        "    hint: pip install torch (the extension is built with torch.utils.cpp_extension)") from None
    from .build import BuildError, build_extension
    from .bindings import render_bindings
    from .llm import translate_module

    options = options_from(args)
    program, cu_text = translate_module(args.file, options, args)  # by rules; by the model only what they reject
    cpp_text = render_bindings(program, Path(args.file).name)
    from .dropin import extension_name, nvcc_flags

    try:  # the same name and flags as numba2cuda.load(), so load() finds this build in the cache
        ext = build_extension(extension_name(args.file), cu_text, cpp_text, extra_cuda_cflags=nvcc_flags(program),
                              arch_list=args.arch)
    except BuildError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_VERDICT
    print(f"built {ext.__file__} ({', '.join(k.c_name for k in program.kernels)})")
    return EXIT_OK


def cmd_translate(args) -> int:
    options = options_from(args)
    if args.emit == "ir":  # the rules' typed IR: a model writes C, not IR
        program = build_program(parse_file(args.file), options)
        text = format_program(program)
    else:
        from .llm import translate_module

        program, text = translate_module(args.file, options, args)  # by rules; by the model only what they reject
    out = args.output or (Path(args.file).stem + (".cu" if args.emit == "cu" else ".ir.txt"))
    if out == "-":
        sys.stdout.write(text)
        return EXIT_OK
    out_path = Path(out)
    if not out_path.parent.exists():
        raise UserError(f"{out}: error: the directory {out_path.parent} does not exist")
    write_atomically(out_path, text)
    names = ", ".join(k.c_name for k in program.kernels)
    print(f"wrote {out} ({len(program.kernels)} kernel{'s' * (len(program.kernels) != 1)}: {names}; "
          f"{text.count(chr(10))} lines)", file=sys.stderr)
    return EXIT_OK


def cmd_verify(args) -> int:
    """Run the module's example() through the Numba original and the translation; exit 0/1 on the verdict."""
    from .llm import verify_translation
    from .verify_cli import cmd_verify as run

    with verify_translation(args) as args:  # where the rules reject a kernel: the model's verified translation
        return run(args)


def _cli_package(args) -> int:
    from .package import cli_package

    return cli_package(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="numba2cuda", description="Translate Numba CUDA kernels into readable CUDA C.",
        epilog="The translator reads the module with libcst and never imports or runs it.")
    parser.add_argument("--version", action="version", version=f"numba2cuda {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    t = sub.add_parser("translate", help="write the CUDA C translation of a Numba module",
                       description="Translate every @cuda.jit kernel of FILE (and the device functions they "
                                   "call) into one .cu file that compiles on its own with nvcc -c.",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_translation_options(t)
    t.add_argument("-o", "--output", metavar="OUT", help="output file, or - for stdout (default: FILE's name with .cu, "
                                                          "in the current directory)")
    t.add_argument("--emit", choices=["cu", "ir"], default="cu", help="cu: CUDA C (default); ir: the typed KernelIR")
    t.set_defaults(func=cmd_translate)

    b = sub.add_parser("build", help="translate and build the torch extension ahead of time",
                       description="Translate FILE and build its kernels and torch bindings into the numba2cuda "
                                   "cache (content-addressed), so numba2cuda.load(FILE) loads in well under a second.",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_translation_options(b)
    b.add_argument("--arch", metavar="LIST", help="CUDA architectures, e.g. \"8.0;9.0\" (default: the present "
                                                   "GPU's, or TORCH_CUDA_ARCH_LIST)")
    b.set_defaults(func=cmd_build)

    pk = sub.add_parser("package", help="write a pip-installable project (and optionally its wheel)",
                        description="Translate FILE into a self-contained project: setup.py with torch's "
                                    "CUDAExtension, the same kernel .cu and binding .cpp as the JIT path, and a "
                                    "Python module with the same drop-in kernels that imports neither numba2cuda, "
                                    "Numba nor libcst. SASS for each architecture, PTX for the newest.",
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_translation_options(pk)
    pk.add_argument("-o", "--output", required=True, metavar="DIR", help="the project directory to write")
    pk.add_argument("--name", help="the Python package name (default: FILE's name + _cuda)")
    pk.add_argument("--arch", default="8.0;9.0", metavar="LIST", help="CUDA architectures (default \"8.0;9.0\")")
    pk.add_argument("--wheel", action="store_true", help="also build the wheel (needs torch and the CUDA toolkit)")
    pk.set_defaults(func=_cli_package)

    v = sub.add_parser("verify", help="check the translation against the Numba original on the module's example()",
                       description="Run the module's example() (per seed, size, specialisation value and input "
                                   "distribution) through the Numba original (on the GPU, or in the CUDA simulator) "
                                   "and through the translation (on the GPU, or the CPU runtime), and compare. This "
                                   "imports and runs FILE; the translator itself never does. Exit 0: equivalent; "
                                   "1: not equivalent; 2: usage or translation error.")
    add_verify_arguments(v)
    add_llm_options(v)
    v.set_defaults(func=cmd_verify)

    from .bench import add_parser as add_bench_parser  # `bench`: its options and logic live in bench.py

    add_bench_parser(sub)
    return parser


def add_translation_options(p) -> None:
    p.add_argument("file", help="a Python module with @cuda.jit kernels")
    p.add_argument("--kernel", action="append", metavar="NAME", help="only this kernel (repeatable)")
    p.add_argument("--types", metavar="SPEC", help=TYPES_HELP)
    p.add_argument("--specialize", action="append", metavar="NAME=V1,V2",
                   help="template instantiations for an integer parameter (repeatable), e.g. tw=8,16,32 "
                        "(the default for parameters that size shared memory or bound loops); NAME= to turn one "
                        "off; 'none' for generic kernels only. Other values always run the generic kernel.")
    p.add_argument("--no-assume-nonnegative", action="store_true",
                   help="do not assume integer kernel parameters are >= 0: keep Numba's negative-index "
                        "wraparound and floor division checks wherever they depend on a parameter")
    add_llm_options(p)


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
