"""The functions the gate's sandboxed children run (sandbox.Worker targets): the reference run of a module's example()
and the verification of a translation against it. General: any untrusted .cu text, not only a model's.

Arguments come from the parent, which the child trusts (options arrive pickled); results go back as JSON
and .npy arrays only, which the parent can read without running anything the child wrote.
"""

from __future__ import annotations

import base64
import pickle


def reference(args: dict, arrays: list) -> tuple[list, list]:
    """The Numba original on the module's examples, as verify plans them (seed 0, the redraws, every
    specialisation value): ([{meta, names}], their arrays in order)."""
    from ..frontend.module import parse_file
    from ..lower.names import entry_name
    from ..runtime.dropin import program_for
    from ..verify.check import DISTRIBUTIONS, kernel_specialisations
    from ..verify.facts import kernel_facts
    from ..verify.original import run_reference

    options = pickle.loads(base64.b64decode(args["options"]))
    program = program_for(parse_file(args["path"], options.import_module, options), options, shells=True)
    cfg = {"seeds": [0], "kernel": "", "specs": kernel_specialisations(program), "sizes": None,
           "device": "simulator", "sim_max_threads": None, "dists": list(DISTRIBUTIONS), "oneoff": None,
           "facts": {entry_name(fn): kernel_facts(fn).to_json() for fn in program.kernels}}
    cases, _ = run_reference(args["path"], cfg)
    metas, flat = [], []
    for meta, named in cases:
        names = sorted(named)
        metas.append({"meta": meta, "names": names})
        flat += [named[n] for n in names]
    return metas, flat


def verify(args: dict, arrays: list) -> tuple[dict, list]:
    """The verdict on args["cu_text"] against the reference the parent passes (args["reference"] + ARRAYS)."""
    from ..verify.run import verify as run_verify

    options = pickle.loads(base64.b64decode(args["options"]))
    reference, k = [], 0
    for case in args["reference"]:
        names = case["names"]
        reference.append((case["meta"], dict(zip(names, arrays[k:k + len(names)]))))
        k += len(names)
    result = run_verify(args["path"], cu_text=args["cu_text"], options=options, reference=reference, fail_fast=True)
    kernels = sorted({c.kernel for c in result.cases})
    # a case is NOT EQUIVALENT (problems) or UNDECIDED (why its reference cannot decide); the verdict may also
    # rest on the translation as a whole (a static check), or on no case at all: each is a failed gate
    bad = [dict(kernel=c.kernel, problem=(c.problems + c.undecided)[0],
                case=f"kernel {c.kernel}, seed {c.seed}, size {c.size}, grid {c.griddim}, block {c.blockdim}, "
                     f"shared {c.shared} B") for c in result.cases if not c.ok]
    bad += [dict(kernel=kernels[0] if kernels else "", problem=p, case="the translation as a whole")
            for p in result.problems]
    if not result.ok and not bad:
        bad.append(dict(kernel="", problem="no case could be checked: " + ("; ".join(result.notes) or "none ran"),
                        case="every case"))
    return dict(ok=result.ok, cases=len(result.cases), kernels=kernels, bad=bad), []
