"""`numba2cuda translate` and `numba2cuda build` -> .cu text or a cached extension. Both translate through
translate_module, which picks the backend (rules, or the model for what they reject), so they live at
the LLM backend's stage; `add_translation_options` is what every translating command takes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..atomic import write_atomically
from ..emit.bindings import render_bindings
from ..emit.irdump import format_program
from ..errors import EXIT_INTERNAL, EXIT_OK, EXIT_VERDICT, UserError
from ..frontend.module import parse_file
from ..lower.options import add_rules_arguments, options_from
from ..lower.program import build_program
from ..runtime.dropin import extension_name, nvcc_flags
from ..runtime.selfcheck import check_cu, defect_report, linked_code_report
from .backend import translate_module
from .config import add_llm_options


def add_translation_options(p) -> None:
    """FILE, the rules' options and the LLM backend's options."""
    p.add_argument("file", help="a Python module with @cuda.jit kernels")
    add_rules_arguments(p)
    add_llm_options(p)


def add_parsers(sub) -> None:
    t = sub.add_parser("translate", help="write the CUDA C translation of a Numba module",
                       description="Translate every @cuda.jit kernel of FILE (and the device functions they "
                                   "call) into one .cu file that compiles on its own with nvcc -c, and check that "
                                   "it does.\n\nExit codes: 0 written; 1 the LLM backend found no verified "
                                   "translation; 2 a problem in FILE or the options (located, nothing written); "
                                   "70 a numba2cuda defect, such as CUDA C the compiler rejects (nothing "
                                   "written).",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_translation_options(t)
    t.add_argument("-o", "--output", metavar="OUT", help="output file, or - for stdout (default: FILE's name with .cu, "
                                                          "in the current directory)")
    t.add_argument("--emit", choices=["cu", "ir"], default="cu", help="cu: CUDA C (default); ir: the typed KernelIR")
    t.add_argument("--no-check", action="store_true",
                   help="do not compile the .cu before writing it. By default translate compiles it once (nvcc -c, "
                        "else g++ against the CPU runtime; about a second, remembered by content): CUDA C the "
                        "compiler rejects is a numba2cuda defect, reported at its Python line with exit code 70 and "
                        "nothing written")
    t.set_defaults(func=cmd_translate)

    b = sub.add_parser("build", help="translate and build the torch extension ahead of time",
                       description="Translate FILE and build its kernels and torch bindings into the numba2cuda "
                                   "cache (content-addressed), so numba2cuda.load(FILE) loads in well under a second.",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_translation_options(b)
    b.add_argument("--arch", metavar="LIST", help="CUDA architectures, e.g. \"8.0;9.0\" (default: the present "
                                                   "GPU's, or TORCH_CUDA_ARCH_LIST)")
    b.set_defaults(func=cmd_build)


def cmd_build(args) -> int:
    """Translate and build the torch extension ahead of time, so numba2cuda.load() finds it cached."""
    try:
        import torch  # noqa: F401
    except ImportError:
        raise UserError("numba2cuda build: error: PyTorch is not installed\n"
                        "    hint: pip install torch (the extension is built with torch.utils.cpp_extension)") from None
    from ..build import BuildError, build_extension

    options = options_from(args)
    program, cu_text = translate_module(args.file, options, args)  # by rules; by the model only what they reject
    cpp_text = render_bindings(program, Path(args.file).name)
    try:  # the same name and flags as numba2cuda.load(), so load() finds this build in the cache
        ext = build_extension(extension_name(args.file), cu_text, cpp_text, extra_cuda_cflags=nvcc_flags(program),
                              arch_list=args.arch)
    except BuildError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_VERDICT
    print(f"built {ext.__file__} ({', '.join(k.name for k in program.kernels)})")
    return EXIT_OK


def cmd_translate(args) -> int:
    options = options_from(args)
    options.device_code_alone = args.emit in ("cu", "ir")
    if args.emit == "ir":  # the rules' typed IR: a model writes C, not IR
        program = build_program(parse_file(args.file, options.import_module, options), options)
        text = format_program(program)
    else:
        program, text = translate_module(args.file, options, args)  # by rules; by the model only what they reject
    for note in getattr(program, "notices", ()):
        print(note.render_note(), file=sys.stderr)
    if args.emit == "cu" and not args.no_check:
        outcome = check_cu(text, Path(args.file).name, program)
        if not outcome.ok and getattr(program, "llm_provenance", None) is not None:
            # a model wrote part of it (its gate compiles with nvcc only where told to): its code, not our bug
            print(f"{args.file}: error: the translation with the model's code does not compile "
                  f"({outcome.compiler}); nothing written\n" + "\n".join(f"    {p.message}" for p in outcome.problems[:5]),
                  file=sys.stderr)
            return EXIT_VERDICT
        if not outcome.ok:
            theirs = linked_code_report(outcome, args.file)
            if theirs is not None:
                raise UserError(theirs)
            print(defect_report(outcome, args.file, program.info.source.splitlines()), file=sys.stderr)
            return EXIT_INTERNAL
        if not outcome.compiler:
            why = outcome.skipped or "neither nvcc nor g++ was found"
            print(f"numba2cuda: note: {why}, so the .cu was not compiled before writing", file=sys.stderr)
    out = args.output or (Path(args.file).stem + (".cu" if args.emit == "cu" else ".ir.txt"))
    if out == "-":
        sys.stdout.write(text)
        return EXIT_OK
    out_path = Path(out)
    if not out_path.parent.exists():
        raise UserError(f"{out}: error: the directory {out_path.parent} does not exist")
    write_atomically(out_path, text)
    print(f"wrote {out} ({contents(program)}; {text.count(chr(10))} lines)",
          file=sys.stderr)
    return EXIT_OK


def kernels_named(names: list, shown: int = 8, what: str = "kernel") -> str:
    """'3 kernels: a, b, c'; past SHOWN names the rest is counted (a module of 60 kernels is not one long line)."""
    listed = ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")
    return f"{len(names)} {what}{'s' * (len(names) != 1)}: {listed}"


def contents(program, shown: int = 8) -> str:
    """What a translation holds: its kernels, or the device functions --kernel named where it has none."""
    if not program.kernels and program.device_roots:
        return kernels_named([fn.c_name for fn in program.device_roots], shown, "device function")
    return kernels_named([k.c_name for k in program.kernels], shown)
