"""`numba2cuda package FILE -o DIR` -> the project (and its wheel): translation by the rules, or by the model
for what they reject, then project.py; exit 0 written, 1 the wheel did not build, 2 a usage error."""

from __future__ import annotations

import argparse
import sys

from ..errors import EXIT_OK, EXIT_USAGE, EXIT_VERDICT, UserError
from ..llm.backend import translate_module
from ..llm.cli import add_translation_options
from ..lower.options import options_from
from .project import DEFAULT_ARCH, PackageBuildError, package


def add_parser(sub) -> None:
    pk = sub.add_parser("package", help="write a pip-installable project (and optionally its wheel)",
                        description="Translate FILE into a self-contained project: setup.py with torch's "
                                    "CUDAExtension, the same kernel .cu and binding .cpp as the JIT path, and a "
                                    "Python module with the same drop-in kernels that imports neither numba2cuda, "
                                    "Numba nor libcst. SASS for each architecture, PTX for the newest.",
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_translation_options(pk)
    pk.add_argument("-o", "--output", required=True, metavar="DIR", help="the project directory to write")
    pk.add_argument("--name", help="the Python package name (default: FILE's name + _cuda)")
    pk.add_argument("--arch", default=DEFAULT_ARCH, metavar="LIST", help=f"CUDA architectures (default \"{DEFAULT_ARCH}\")")
    pk.add_argument("--wheel", action="store_true", help="also build the wheel (needs torch and the CUDA toolkit)")
    pk.set_defaults(func=cli_package)


def cli_package(args) -> int:
    """`numba2cuda package FILE -o DIR [--name NAME] [--arch LIST] [--wheel]`: 0 ok, 2 user error, 1 build failed."""
    try:
        if not args.output:
            raise UserError("numba2cuda package: error: -o/--output DIR is required")
        options = options_from(args)
        translation = translate_module(args.file, options, args)  # by rules; by the model only what they reject
        result = package(args.file, args.output, name=args.name, arch=args.arch or DEFAULT_ARCH,
                         wheel=bool(args.wheel), options=options, translation=translation)
    except UserError as exc:
        print(exc.text, file=sys.stderr)
        return EXIT_USAGE
    except PackageBuildError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_VERDICT
    print(f"wrote {result.out_dir} ({result.name}: {len(result.files)} files)", file=sys.stderr)
    if result.wheel:
        print(f"built {result.wheel} in {result.build_seconds:.1f} s", file=sys.stderr)
    return EXIT_OK
