"""a translated module built and loaded with nvcc + one launch on the GPU -> the arrays after it; in a child process.

The worker side of the verifier's GPU tier (and of any caller that runs an untrusted translation on a GPU:
the LLM backend's gate). A kernel that faults poisons the CUDA context of its process for good, so it runs
in a child (translator/sandbox.py's Worker, with Limits(address_space=None): a CUDA context reserves far
more address space than it uses) that the caller restarts after a fatal error:

    w = Worker(Limits(address_space=None))
    w.call("translator.runtime.gpu_worker:prepare", load)               # build (cached) and load
    w.call("translator.runtime.gpu_worker:run_case", dict(load, kernel=..., grid=..., block=..., shared=...,
           params=[...]), arrays)

load: {"path": the Numba module, "cu_text": a given translation or null, "specialize", "types", "kernels",
       "assume_nonnegative"} as dropin.load takes them.
params: one entry per kernel parameter, {"name", "array": true, ...} or {"name", "array": false, "value"}.
Returns ({"error": null} , arrays after the launch), or ({"error": message, "fatal": bool}, []): fatal when
the CUDA context is lost and the worker must be restarted.
"""

from __future__ import annotations

import hashlib
import json

_MODULES: dict = {}


def _module(load: dict):
    from .dropin import load as load_module

    key = hashlib.sha256(json.dumps({k: load.get(k) for k in ("path", "cu_text", "specialize", "types", "kernels",
                                                               "assume_nonnegative", "import_module")}, sort_keys=True,
                                    default=str).encode()).hexdigest()
    mod = _MODULES.get(key)
    if mod is None:
        mod = _MODULES[key] = load_module(load["path"], specialize=load.get("specialize") or None,
                                          types=load.get("types") or None, kernels=load.get("kernels") or None,
                                          assume_nonnegative=load.get("assume_nonnegative", True),
                                          cu_text=load.get("cu_text"), progress=False,
                                          import_module=load.get("import_module"))
    return mod


def prepare(load: dict, arrays: list):
    mod = _module(load)
    return {"kernels": list(mod.kernels)}, []


def run_case(args: dict, arrays: list):
    import numpy as np
    import torch

    from .records import from_words, is_record_array, to_torch

    mod = _module(args)
    given = iter(arrays)
    # every array goes to the device and back, inputs too: a write to a read-only input must show; record
    # arrays (RNG states) travel as their uint64 words
    host = [np.require(next(given), requirements=p.get("order", "C")) if p["array"] else
            complex(*p["value"]) if p.get("complex") else
            tuple(p["value"]) if isinstance(p["value"], list) else p["value"] for p in args["params"]]  # JSON lists
    dev = [to_torch(a, "cuda") if isinstance(a, np.ndarray) else a for a in host]
    try:
        mod.kernels[args["kernel"]][tuple(args["grid"]), tuple(args["block"]), 0, int(args["shared"])](*dev)
        torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - a refused launch, a fault: data for the verdict
        text = str(exc).strip()
        message = f"{type(exc).__name__}: " + (text.splitlines()[0] if text else "")
        # a fault (KernelFaultError, torch's CUDA error) leaves this process's CUDA context unusable
        fatal = "Fault" in type(exc).__name__ or any(w in text for w in ("CUDA error", "illegal", "launch failure"))
        return {"error": message, "fatal": fatal}, []
    return {"error": None}, [from_words(d.cpu().numpy(), a) if is_record_array(a) else d.cpu().numpy()
                             for d, a in zip(dev, host) if isinstance(d, torch.Tensor)]
