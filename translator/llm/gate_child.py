"""The functions the gate's sandboxed children run (sandbox.Worker targets): the reference run of a module's example()
and the verification of a translation against it. General: any untrusted .cu text, not only a model's.

Arguments come from the parent, which the child trusts (options arrive pickled); results go back as JSON
and .npy arrays only, which the parent can read without running anything the child wrote.
"""

from __future__ import annotations

import base64
import pickle


def reference(args: dict, arrays: list) -> tuple[list, list]:
    """The Numba original on example() (verify's reference, seed 0): ([{meta, names}], their arrays in order)."""
    from ..verify.check import run_reference

    cases, _ = run_reference(args["path"], [0], None, args.get("specs") or {})
    metas, flat = [], []
    for meta, named in cases:
        names = sorted(named)
        metas.append({"meta": meta, "names": names})
        flat += [named[n] for n in names]
    return metas, flat


def verify(args: dict, arrays: list) -> tuple[dict, list]:
    """The verdict on args["cu_text"] against the reference the parent passes (args["reference"] + ARRAYS)."""
    from ..verify.check import verify as run_verify

    options = pickle.loads(base64.b64decode(args["options"]))
    reference, k = [], 0
    for case in args["reference"]:
        names = case["names"]
        reference.append((case["meta"], dict(zip(names, arrays[k:k + len(names)]))))
        k += len(names)
    result = run_verify(args["path"], cu_text=args["cu_text"], options=options, reference=reference)
    bad = [dict(kernel=c.kernel, problem=c.problems[0],
                case=f"kernel {c.kernel}, seed {c.seed}, size {c.size}, grid {c.griddim}, block {c.blockdim}, "
                     f"shared {c.shared} B") for c in result.cases if not c.ok]
    return dict(ok=result.ok, cases=len(result.cases), kernels=sorted({c.kernel for c in result.cases}),
                bad=bad), []
