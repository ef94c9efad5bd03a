"""`--kernel/--types/--specialize/--no-assume-nonnegative` -> Options: the rules' own command-line options,
shared by every subcommand that translates (translate, build, package, bench)."""

from __future__ import annotations

from ..analysis import specialize
from ..errors import UserError
from ..ir.typesys import TypeStringError, UnknownTypeName, parse_types_option
from ..frontend.importmode import import_mode_of
from .program import Options

TYPES_HELP = """argument types as Numba spells them, for kernels without a signature:
"m=float32[:, ::1], n=float32[:, ::1], out=float32[:, ::1], tw=int32".
Scalars: bool int8 int16 int32 int64 uint8..uint64 float32 float64 (and f4, i8, intp ...).
Arrays: DTYPE[:] or DTYPE[::1] for 1-D, DTYPE[:, :] or DTYPE[:, ::1] for 2-D, and so on.
Records (structured dtypes): the dtype's name in the module, "ps=particle[:]", or the type as
numba.typeof prints it, "ps=Record(x[type=float32;offset=0],...;8;False)[:]".
Overrides the decorator's signature and parameter annotations."""


def add_rules_arguments(p) -> None:
    p.add_argument("--kernel", action="append", metavar="NAME", help="only this kernel (repeatable)")
    p.add_argument("--types", metavar="SPEC", help=TYPES_HELP)
    p.add_argument("--specialize", action="append", metavar="NAME=V1,V2",
                   help="template instantiations for an integer parameter (repeatable), e.g. tw=8,16,32 "
                        "(the default for parameters that size shared memory or bound loops); NAME= to turn one "
                        "off; 'none' for generic kernels only. Other values always run the generic kernel.")
    p.add_argument("--import-module", dest="import_module", action="store_const", const="sim",
                   help="import the module (in a child process, as running it would) and take each kernel's "
                        "free names from the values that gives, as Numba does when it compiles: kernels made by "
                        "factories or a project's own decorators, constants computed by calls, NumPy arrays. A "
                        "kernel made inside a function or without a signature: the tests, main() and `if __name__ "
                        "== '__main__':` block that reach it run up to its first launch, whose types and values "
                        "Numba compiles. Under the CUDA simulator: no GPU needed. Also [tool.numba2cuda] "
                        "import_module = true. Default: read the source only, never running it")
    p.add_argument("--import-module-gpu", dest="import_module", action="store_const", const="gpu",
                   help="the same, with Numba's real CUDA target (a GPU is needed; import_module = \"gpu\")")
    p.add_argument("--no-assume-nonnegative", action="store_true",
                   help="do not assume integer kernel parameters are >= 0: keep Numba's negative-index "
                        "wraparound and floor division checks wherever they depend on a parameter")


def read_types(options: Options, text: str, command: str) -> None:
    """--types into OPTIONS; a name that is not Numba's (`ps=particle[:]`) is kept as text for the module's own
    dtypes to give it, once the module is read (kernel_types.kernel_types_of)."""
    try:
        options.types = parse_types_option(text)
    except UnknownTypeName:
        options.types_text = text
    except TypeStringError as exc:
        raise UserError(f"--types: error: {exc}\n    hint: write name=type pairs, e.g. "
                        f"\"m=float32[:, ::1], tw=int32\" (see numba2cuda {command} --help)") from None


def options_from(args) -> Options:
    options = Options(kernels=args.kernel or [], assume_nonnegative=not args.no_assume_nonnegative,
                      import_module=import_mode_of(args))
    if args.types:
        read_types(options, args.types, "translate")
    for spec in args.specialize or []:
        options.specialize.update(specialize.parse_option(spec))
    return options
